"""Base classes of compiled models: the interface the trainer, probes, GUI and exports use.

A compiled model is a subclass of :class:`GraphModel` whose ``__init__`` and ``forward`` are
generated from a graph. Generated classes list their blocks in ``BLOCKS``: node ids (the
attribute has the same name) or pairs of (node id, attribute name), where the attribute is a
module, or an ``nn.ModuleList`` of generated :class:`GraphLayer` copies for a repeated group.
"""
import math

import torch
from torch import nn

from .cache import DecodingCache
from .hooks import Hooked, HookLabel
from .norm import Norm

INIT_STD = 0.02


class GraphLayer(Hooked):
    """One copy of a group's sub-graph (a generated subclass)."""

    BLOCKS: tuple = ()
    hooked_from_outside = True   # its forward is generated: forward hooks feed its points

    def __init__(self):
        super().__init__()
        self._declare("in", "out")

    def _hook_labels(self) -> dict[str, HookLabel]:
        return {"in": HookLabel("stream in", "x entering this layer"),
                "out": HookLabel("residual stream", "x after this layer: its input plus what "
                                 "each branch added")}


class GraphModel(nn.Module):
    """A model compiled from a graph: a generated subclass sets its blocks, forward and the class
    attributes below (family: decoder | encoder | encoder-decoder; head_type: lm_head | ...)."""

    BLOCKS: tuple = ()
    family = "decoder"
    input_roles = ["tokens"]
    head_type = "lm_head"
    vocab_size = 0
    supports_cache = True
    graph = None   # the tfstudio Graph it came from (None in a standalone export)
    source = ""    # the generated Python source of this class and its layer classes

    def blocks(self) -> list:
        """(path_key, module) for every node instance, in graph order: ("embed",), ("layers", 0)
        for copy 0 of group "layers" (a generated layer), ("layers", 0, "attn") inside it."""
        found = []

        def walk(owner, prefix):
            for entry in owner.BLOCKS:
                node_id, attr = (entry, entry) if isinstance(entry, str) else entry
                module = getattr(owner, attr)
                if isinstance(module, nn.ModuleList):
                    for i, layer in enumerate(module):
                        found.append((prefix + (node_id, i), layer))
                        walk(layer, prefix + (node_id, i))
                else:
                    found.append((prefix + (node_id,), module))

        walk(self, ())
        return found

    def attention_modules(self) -> list:
        """The (path_key, module) pairs of blocks() that are self- or cross-attention."""
        # duck-typed (their shared ``_attend``), so an exported model.py need not carry both
        return [(k, m) for k, m in self.blocks() if hasattr(m, "_attend")]

    def aux_loss(self) -> torch.Tensor:
        """Sum of the MoE load-balancing losses of the last forward (0 when there are none)."""
        # duck-typed, so an exported model.py need not carry the MoE code to have this method
        losses = [vars(m)["aux_loss"] for m in self.modules()   # (getattr would raise and
                  if isinstance(vars(m).get("aux_loss"), torch.Tensor)]   # catch per module)
        if not losses:
            return torch.zeros((), device=next(self.parameters()).device)
        return torch.stack(losses).sum()

    def new_cache(self) -> DecodingCache:
        """An empty cache for incremental decoding: ``model(chunk, cache=cache)``."""
        if not self.supports_cache:
            raise ValueError(f"a {self.family} model reads its whole input at once (bidirectional "
                             "attention): it has no incremental decoding; call it without a cache")
        return DecodingCache()

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """GPT-2's init: normal(0, 0.02) Linear and Embedding weights, zero biases, norms at one,
        0.02 / sqrt(residual branches) for projections into the stream; RNN cells keep theirs."""
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, 0.0, INIT_STD)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, 0.0, INIT_STD)
            elif isinstance(module, (Norm, nn.LayerNorm)):
                module.reset_parameters()
        branches = [m for _, m in self.blocks() if getattr(m, "residual_branch", False)]
        std = INIT_STD / math.sqrt(max(len(branches), 1))
        for module in branches:
            for proj in module.residual_projections():
                nn.init.normal_(proj.weight, 0.0, std)
