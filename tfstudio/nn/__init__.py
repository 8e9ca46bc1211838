"""Torch implementations of the block catalogue.

These modules import only torch, math and the standard library (never tfstudio), so an export can
inline their source into a standalone ``model.py``; ``SOURCE_FILES`` lists them in dependency
order for that purpose.
"""
from .attention import CrossAttention, SelfAttention
from .cache import DecodingCache
from .embedding import PositionalEncoding, TokenEmbedding
from .feedforward import FeedForward, MixtureOfExperts
from .heads import LMHead, MLMHead
from .model import GraphLayer, GraphModel
from .norm import Norm
from .positions import alibi_slopes, apply_rope, rope_angles, sinusoidal_table
from .recurrent import Recurrent
from .residual import Add, Dropout

SOURCE_FILES = ("cache.py", "positions.py", "norm.py", "residual.py", "embedding.py",
                "attention.py", "feedforward.py", "heads.py", "recurrent.py", "model.py")

__all__ = ["Add", "CrossAttention", "DecodingCache", "Dropout", "FeedForward", "GraphLayer",
           "GraphModel", "LMHead", "MLMHead", "MixtureOfExperts", "Norm", "PositionalEncoding",
           "Recurrent", "SelfAttention", "TokenEmbedding", "alibi_slopes", "apply_rope",
           "rope_angles", "sinusoidal_table", "SOURCE_FILES"]
