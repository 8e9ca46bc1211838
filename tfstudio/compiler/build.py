"""compile_graph: validate a graph, generate its model's source, execute that source, build it."""
from __future__ import annotations

import itertools
import linecache

from ..graph.model import Graph
from ..graph.shapes import infer_shapes
from .plan import plan_model
from .codegen import generate_source
from .errors import CompileError

_counter = itertools.count(1)


def compile_graph(graph: Graph, *, validate: bool = True):
    """Compile ``graph`` into a :class:`tfstudio.nn.GraphModel` (an ``nn.Module``).

    The modules are created on torch's current default device, so building under
    ``with torch.device("meta"):`` allocates nothing (handy for counting a 175B model)."""
    if validate:
        _refuse_invalid(graph)
    plan = plan_model(graph)
    source = generate_source(graph, plan, infer_shapes(graph))
    model_class = exec_source(source)
    model = model_class()
    model.graph = graph.clone()
    model.source = source
    return model


def exec_source(source: str):
    """Execute generated source (only ever text from :func:`generate_source`) next to the
    ``tfstudio.nn`` classes; returns its ``Model`` class."""
    filename = f"<tfstudio-model-{next(_counter)}>"
    # registered so tracebacks and inspect show the generated lines
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = exec_namespace()
    exec(compile(source, filename, "exec"), namespace)
    return namespace["Model"]


def exec_namespace() -> dict:
    """The names generated code can read: tfstudio.nn's, registered plug-in classes, torch."""
    import math

    import torch
    import torch.nn.functional as F
    from torch import nn

    from .. import nn as blocks

    namespace = {name: getattr(blocks, name) for name in blocks.__all__}
    namespace.update(blocks.MODULES)  # classes of block types defined outside tfstudio
    namespace.update(torch=torch, nn=nn, F=F, math=math, __name__="tfstudio_generated")
    return namespace


def _refuse_invalid(graph: Graph) -> None:
    try:
        from ..graph.validate import validate
    except ImportError:  # validation not available in this build: the compiler's own checks run
        return
    errors = [d for d in validate(graph) if getattr(d, "severity", "") == "error"]
    if not errors:
        return
    lines = []
    for d in errors:
        path = tuple(getattr(d, "path", ()) or ())
        place = "".join(f"{g} > " for g in path) + (f"{d.node_id}: " if d.node_id else "")
        hint = f" (fix: {d.hint})" if getattr(d, "hint", "") else ""
        lines.append(f"  - {place}{d.message}{hint}")
    raise CompileError("the graph has errors, so it cannot be compiled:\n" + "\n".join(lines))
