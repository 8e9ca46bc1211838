"""Torch implementations of the block catalogue.

These modules import only torch, math and the standard library (never tfstudio), so an export can
copy the classes a model uses into a standalone ``model.py``.
"""
from .attention import CrossAttention, SelfAttention
from .cache import DecodingCache
from .embedding import PositionalEncoding, TokenEmbedding
from .feedforward import FeedForward, MixtureOfExperts
from .heads import LMHead, MLMHead
from .hooks import HookPoint, attached, hook_points
from .model import GraphLayer, GraphModel
from .norm import Norm
from .positions import alibi_slopes, apply_rope, rope_angles, rotate_pairs, sinusoidal_table
from .recurrent import Recurrent
from .residual import Add, Dropout
from .window import FixedWindow

# Every class the generated code may build, by name: this package's own, and any a block type
# defined outside tfstudio adds with register_module.
MODULES: dict = {}


def register_module(cls: type) -> type:
    """Make ``cls`` (an ``nn.Module`` subclass) buildable by name from generated code."""
    MODULES[cls.__name__] = cls
    return cls


def unregister_module(name: str) -> None:
    MODULES.pop(name, None)


__all__ = ["Add", "CrossAttention", "DecodingCache", "Dropout", "FeedForward", "GraphLayer",
           "GraphModel", "HookPoint", "LMHead", "MLMHead", "MixtureOfExperts", "Norm",
           "PositionalEncoding", "Recurrent", "SelfAttention", "TokenEmbedding", "alibi_slopes",
           "apply_rope", "attached", "hook_points", "rope_angles", "rotate_pairs",
           "sinusoidal_table", "FixedWindow", "MODULES", "register_module", "unregister_module"]

for _cls in (Add, CrossAttention, Dropout, FeedForward, LMHead, MLMHead, MixtureOfExperts, Norm,
             PositionalEncoding, Recurrent, SelfAttention, TokenEmbedding, FixedWindow):
    register_module(_cls)
