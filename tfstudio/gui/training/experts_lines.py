"""What the experts view says before a run, without Qt: whether the graph on the canvas has
mixture-of-experts blocks to show, and how many (:func:`before_training`)."""
from __future__ import annotations

from ...graph import block_types as bt

NO_MOE = ("This graph has no mixture-of-experts block. Try the tiny-mixtral preset to see a "
          "router at work.")
MOE_BEFORE_TRAINING = ("This graph has {n} mixture-of-experts block{s}. Press Train: the share "
                       "of tokens each expert receives, and the expert each probe token goes "
                       "to, appear here as the router learns.")


def moe_blocks(graph) -> int:
    """How many MoE blocks the graph holds (inside groups too, one per group copy)."""
    count = 0
    for node in graph:
        if node.is_group:
            count += moe_blocks(node.subgraph) * max(1, int(node.typed_params().repeat or 1))
        elif node.type == bt.MOE:
            count += 1
    return count


def before_training(graph) -> str:
    """The experts view's hint before any run: the graph's MoE blocks, or that it has none."""
    n = moe_blocks(graph)
    return MOE_BEFORE_TRAINING.format(n=n, s="s" * (n != 1)) if n else NO_MOE
