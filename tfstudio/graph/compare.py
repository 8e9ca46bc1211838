"""Whether two graphs describe the same model, whatever their layout.

Reopening a past run asks this of the run's graph and the canvas's: positions, titles, the
graph's name and description are how a graph is drawn and labelled, not what it computes; the
vocabulary size is left out too, because a run saves its graph with the vocabulary fitted to
its tokenizer (tfstudio.train.pipeline.fit_graph_to_tokenizer), so the graph the user trained
and the one the run saved differ there and nowhere else.
"""
from __future__ import annotations

from typing import Any

from .model import Graph

LABEL_META = ("name", "description")   # a graph's labels, not its model
FITTED_PARAMS = ("vocab_size",)        # set to the tokenizer's by training


def model_signature(graph: Graph, fitted: bool = False) -> dict[str, Any]:
    """What ``graph`` computes, as plain data that compares with ``==`` (``fitted``: the
    vocabulary size too, so that equal signatures count the same parameters)."""
    nodes = {}
    for node in graph.nodes.values():
        params = {k: v for k, v in node.resolved_params().items()
                  if fitted or k not in FITTED_PARAMS}
        nodes[node.id] = (node.type, params, model_signature(node.subgraph, fitted)
                          if node.subgraph is not None else None)
    meta = {k: v for k, v in graph.meta.items() if k not in LABEL_META}
    return {"nodes": nodes, "edges": sorted(graph.edges), "meta": meta}


def same_model(a: Graph, b: Graph, fitted: bool = False) -> bool:
    """True when ``a`` and ``b`` compile to the same model (layout and labels aside;
    ``fitted``: the same vocabulary size too)."""
    return model_signature(a, fitted) == model_signature(b, fitted)
