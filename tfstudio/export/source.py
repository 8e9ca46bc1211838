"""What an export starts from: a run folder, a compiled model, a graph, a preset name or a graph
file, each resolved to (compiled model in eval mode, its graph, its tokenizer if known)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InteropError


@dataclass
class Source:
    model: Any                # a compiled tfstudio GraphModel, on the CPU, in eval mode
    graph: Any                # its tfstudio Graph
    tokenizer: Any | None     # a tfstudio Tokenizer, when the source has one
    origin: str               # what it was made from, for reports
    trained: bool             # False: freshly initialised weights


def resolve_source(source, state_dict: dict | None = None, tokenizer=None) -> Source:
    """``source``: a run folder, a compiled model, a Graph, a preset name or a graph .json.
    ``state_dict`` (optional) replaces the weights; ``tokenizer`` (optional) goes along."""
    import torch

    from ..compiler import compile_graph
    from ..graph import Graph

    trained = state_dict is not None
    if isinstance(source, torch.nn.Module):
        if getattr(source, "graph", None) is None:
            raise InteropError("this module was not compiled by tfstudio (it has no .graph); "
                               "pass the graph and its state_dict instead")
        model, graph, origin, trained = source, source.graph, "a compiled model", True
    elif isinstance(source, Graph):
        graph, origin = source, "a graph"
        model = compile_graph(graph)
    else:
        path = Path(source)
        if path.is_dir():
            return _from_run(path, state_dict, tokenizer)
        from ..presets import load_preset_or_file
        graph = load_preset_or_file(source)
        origin = f"graph {source}"
        model = compile_graph(graph)
    if state_dict is not None:
        try:
            model.load_state_dict(state_dict)
        except RuntimeError as exc:
            raise InteropError(f"the state_dict does not fit {origin}: {exc}") from None
    return Source(model.cpu().eval(), graph, tokenizer, origin, trained)


def _from_run(path: Path, state_dict, tokenizer) -> Source:
    from ..runs.folder import RunError, RunFolder

    folder = RunFolder(path)
    if not folder.exists():
        raise InteropError(f"{path} is not a tfstudio run folder (it lacks graph.json or "
                           "config.json); pass a run written by `tfstudio train`, a preset "
                           "name or a graph .json")
    try:
        if state_dict is None:
            model = folder.load_model("cpu")
        else:
            from ..compiler import compile_graph
            model = compile_graph(folder.graph())
            model.load_state_dict(state_dict)
    except (RunError, RuntimeError) as exc:
        raise InteropError(str(exc)) from None
    if tokenizer is None and folder.tokenizer_path.exists():
        tokenizer = folder.tokenizer()
    return Source(model.cpu().eval(), model.graph, tokenizer, f"run {path}", True)
