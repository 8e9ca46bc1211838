"""Validation: everything wrong with a graph, as diagnostics a beginner can act on.

Each :class:`Diagnostic` names the node it is about (and the group path leading to it), says
what is wrong and how to fix it, and carries a stable ``code`` so tests and the editor can
tell rules apart. Structural rules (cycles, wires, ports, groups) live here; rules about one
kind of block (heads dividing d_model, top-k <= experts, ...) live in that block's schema as
its ``check`` hook, which receives a :class:`CheckContext`.

Codes. Structure: cycle, dangling_wire, unknown_port, unconnected_input, multiple_wires,
port_kind_mismatch, cross_attention_without_memory, group_boundary, boundary_outside_group,
repeat_shape_changes, unknown_block, unknown_param, bad_param, bad_context_length,
shape_inference, check_failed, no_output_head, unused_output (warning). Blocks: width_mismatch
(Add), heads_divide_d_model, kv_heads_divide_heads, rope_odd_head_dim, cross_memory_width,
top_k_exceeds_experts, router_without_gradient (warning), learned_positions_too_short,
vocab_mismatch, tie_without_embedding, tie_shape_mismatch, decoder_not_causal, encoder_causal
(warning).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from . import block_types as bt
from .model import (GROUP, GROUP_INPUT, GROUP_OUTPUT, Graph, GraphError, Node, kind_words,
                    parse_port_list)
from .schema import LOGITS, PORT_KINDS, MEMORY, UnknownBlockError, get_spec, kind_accepts
from .shapes import ShapeMap, infer_shapes

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class Diagnostic:
    severity: str                 # "error" | "warning"
    message: str                  # what is wrong, in words a beginner understands
    hint: str                     # how to fix it
    node_id: str | None           # the node it is about (None: the whole graph)
    path: tuple[str, ...] = ()    # group ids leading to the graph holding node_id (() = top level)
    code: str = ""                # stable rule id, e.g. "heads_divide_d_model"
    # the one obvious fix, when there is one: set parameter ``fix[0]`` of ``node_id`` to
    # ``fix[1]`` (``edit_rules.fix_edit`` makes it an edit; the Problems panel's Fix button)
    fix: tuple[str, Any] | None = None

    @property
    def where(self) -> str:
        """``group/.../node`` or ``graph`` when it concerns the whole graph."""
        parts = [*self.path, self.node_id] if self.node_id else list(self.path)
        return "/".join(parts) or "graph"

    def __str__(self) -> str:
        return f"{self.severity} at {self.where}: {self.message} Fix: {self.hint}"


@dataclass
class CheckContext:
    """What a block's ``check`` hook may look at, and how it reports."""

    graph: Graph                  # the graph holding the node (a group's inside, or the root)
    path: tuple[str, ...]
    node: Node
    in_shapes: dict[str, tuple]
    context_length: int | None    # the training length, when known
    shapes: ShapeMap

    def error(self, code: str, message: str, hint: str, *, node_id: str | None = None,
              inside: tuple[str, ...] = (), fix: tuple[str, Any] | None = None) -> Diagnostic:
        """An error about this node, or about ``node_id`` found ``inside`` its groups;
        ``fix`` its one obvious fix (parameter, value) when it has one."""
        return Diagnostic(ERROR, message, hint, node_id or self.node.id, self.path + inside, code,
                          fix)

    def warning(self, code: str, message: str, hint: str, *, node_id: str | None = None,
                inside: tuple[str, ...] = ()) -> Diagnostic:
        return Diagnostic(WARNING, message, hint, node_id or self.node.id, self.path + inside,
                          code)


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.severity == ERROR for d in diagnostics)


def validate(graph: Graph, *, context_length: int | None = None) -> list[Diagnostic]:
    """Every problem in ``graph`` and in the groups inside it, errors and warnings.

    ``context_length`` (the training length; defaults to ``graph.meta["context_length"]``)
    lets rules such as "the learned position table is too short" apply."""
    found: list[Diagnostic] = []
    if context_length is None:
        context_length = graph.meta.get("context_length")
        if context_length is not None and (isinstance(context_length, bool)
                                           or not isinstance(context_length, int)
                                           or context_length < 1):
            found.append(Diagnostic(
                ERROR, f"the graph's context_length {context_length!r} is not a positive "
                "whole number", "set meta.context_length to the training length, e.g. 256",
                None, (), "bad_context_length"))
            context_length = None
    shapes = infer_shapes(graph)
    _Validator(shapes, context_length, found).graph(graph, ())
    if not any(LOGITS in _output_kinds(graph, n) for n in graph):
        found.append(Diagnostic(
            ERROR, "the model has no output head, so it produces no predictions to train on",
            "add an LM head (or masked-LM / seq2seq head) at the end of the main stream",
            None, (), "no_output_head"))
    return _unique(found)


def _unique(items: list[Diagnostic]) -> list[Diagnostic]:
    """Drop repeated diagnostics, keeping the first of each in order."""
    return list(dict.fromkeys(items))


def _output_kinds(graph: Graph, node: Node) -> set[str]:
    try:
        return {p.kind for p in graph.output_ports(node.id)}
    except (GraphError, KeyError):  # an unknown type or malformed ports: reported elsewhere
        return set()


@dataclass
class _Validator:
    shapes: ShapeMap
    context_length: int | None
    found: list[Diagnostic]

    def add(self, severity: str, code: str, message: str, hint: str, node_id: str | None,
            path: tuple[str, ...]) -> None:
        self.found.append(Diagnostic(severity, message, hint, node_id, path, code))

    # ----------------------------------------------------------------- one graph
    def graph(self, graph: Graph, path: tuple[str, ...]) -> None:
        cycle = graph.find_cycle()
        if cycle:
            self.add(ERROR, "cycle",
                     "these blocks form a loop (" + " -> ".join(cycle + cycle[:1]) + "); data "
                     "must flow one way from the tokens to the head",
                     "remove one of the wires in the loop (a repeated layer is a group with "
                     "repeat > 1, not a wire back)", cycle[0], path)
        if not path:
            for node in graph.nodes_of_type(GROUP_INPUT, GROUP_OUTPUT):
                self.add(ERROR, "boundary_outside_group",
                         f"'{node.id}' is a group boundary block, which only belongs inside a "
                         "group", "delete it, or group the blocks it should surround", node.id,
                         path)
        for e in graph.edges:
            for end in (e.src, e.dst):
                if end not in graph.nodes:
                    self.add(ERROR, "dangling_wire",
                             f"the wire {e} refers to a block '{end}' that does not exist",
                             "delete the wire", None, path)
        for node in graph:
            self.node(graph, node, path)

    # ----------------------------------------------------------------- one node
    def node(self, graph: Graph, node: Node, path: tuple[str, ...]) -> None:
        try:
            spec = get_spec(node.type)
        except UnknownBlockError as exc:
            self.add(ERROR, "unknown_block", str(exc),
                     "replace it with a known block type", node.id, path)
            return
        params_ok = self.params(node, spec, path)
        if node.type == GROUP:
            if not self.group(node, path):
                return
        elif node.subgraph is not None:
            self.add(ERROR, "group_boundary",
                     f"'{node.id}' is a {node.type} block but holds a sub-graph; only groups do",
                     "ungroup the inside or rebuild the block", node.id, path)
        if node.type in (GROUP_INPUT, GROUP_OUTPUT) and path:
            self.port_list(node, path)
        self.wires(graph, node, path)
        key = (path, node.id)
        if key in self.shapes.errors:
            code = self.shapes.codes.get(key, "shape_inference")
            hint = ("make the inside of the group end with the same width and kind it starts "
                    "with (a residual layer does)" if code == "repeat_shape_changes" else
                    "check this block's parameters and the wires into it")
            self.add(ERROR, code, self.shapes.errors[key], hint, node.id, path)
        self.unused(graph, node, path)
        if spec.check is not None and params_ok:
            ctx = CheckContext(graph, path, node, self.shapes.input_shapes(node.id, path),
                               self.context_length, self.shapes)
            try:
                self.found.extend(spec.check(node, ctx.in_shapes, ctx) or ())
            except (ArithmeticError, KeyError, TypeError, ValueError) as exc:
                self.add(ERROR, "check_failed",
                         f"'{node.id}' could not be checked ({exc})",
                         "check the parameters of this block and of the blocks it reads",
                         node.id, path)

    def params(self, node: Node, spec, path) -> bool:
        """Report unknown or malformed parameters; True when there are none."""
        count = len(self.found)
        for name, value in node.params.items():
            try:
                param = spec.param(name)
            except KeyError:
                self.add(ERROR, "unknown_param",
                         f"block '{node.id}' ({node.type}) has no parameter '{name}'",
                         f"remove '{name}'; its parameters are "
                         f"{', '.join(p.name for p in spec.params) or 'none'}", node.id, path)
                continue
            try:
                ok = param.coerce(value) == value
            except (ValueError, TypeError) as exc:
                self.add(ERROR, "bad_param", f"'{node.id}': {exc}",
                         f"set '{name}' to a valid {param.kind}", node.id, path)
                continue
            if not ok:
                self.add(ERROR, "bad_param",
                         f"'{node.id}': parameter '{name}' holds {value!r}, not a {param.kind}",
                         f"set '{name}' again in the inspector", node.id, path)
        return len(self.found) == count

    # ----------------------------------------------------------------- groups
    def group(self, node: Node, path: tuple[str, ...]) -> bool:
        """Check a group's boundary and its inside; False when its ports cannot be known."""
        inside = node.subgraph
        if inside is None:
            self.add(ERROR, "group_boundary",
                     f"group '{node.id}' has no inside (its sub-graph is missing)",
                     "delete the group, or add blocks to it", node.id, path)
            return False
        ok = True
        for boundary, role in ((GROUP_INPUT, "inputs"), (GROUP_OUTPUT, "outputs")):
            count = len(inside.nodes_of_type(boundary))
            if count != 1:
                ok = False
                self.add(ERROR, "group_boundary",
                         f"group '{node.id}' has {count} '{boundary}' blocks; it needs exactly "
                         f"one to define its {role}",
                         f"enter the group and {'add' if count == 0 else 'delete all but'} one "
                         f"'{boundary}' block", node.id, path)
        self.graph(inside, path + (node.id,))
        repeat = node.params.get("repeat", 1)
        if ok and isinstance(repeat, int) and repeat > 1:
            ins, outs = _ports(inside, GROUP_INPUT), _ports(inside, GROUP_OUTPUT)
            if not ins or not outs or ins[0][1] != outs[0][1]:
                self.add(ERROR, "repeat_shape_changes",
                         f"group '{node.id}' repeats {repeat} times, so its first output feeds "
                         "the next copy's first input, but "
                         + ("it has no input or output" if not ins or not outs else
                            f"it takes {ins[0][1]} and gives {outs[0][1]}"),
                         "make the first output the same kind as the first input, or set "
                         "repeat to 1", node.id, path)
        return ok

    def port_list(self, node: Node, path) -> None:
        text = node.params.get("ports", get_spec(node.type).param("ports").default)
        names = []
        for name, kind in parse_port_list(text):
            problem = None
            if not name.isidentifier():
                problem = f"'{name}' is not a usable port name"
            elif kind not in PORT_KINDS:
                problem = f"port '{name}' has kind '{kind}', which is not one of " + ", ".join(
                    PORT_KINDS)
            elif name in names:
                problem = f"port '{name}' is listed twice"
            names.append(name)
            if problem:
                self.add(ERROR, "group_boundary",
                         f"the group boundary '{node.id}' is malformed: {problem}",
                         "write its ports as name:kind, comma separated, e.g. "
                         "'x:hidden, memory:memory'", node.id, path)

    def unused(self, graph: Graph, node: Node, path) -> None:
        if node.type in (GROUP_INPUT, GROUP_OUTPUT) or graph.out_edges(node.id):
            return
        kinds = _output_kinds(graph, node)
        if kinds and LOGITS not in kinds:
            self.add(WARNING, "unused_output",
                     f"nothing uses the output of '{node.id}', so it does not affect the model",
                     "wire its output onward, or delete it", node.id, path)

    # ----------------------------------------------------------------- wires
    def wires(self, graph: Graph, node: Node, path) -> None:
        try:
            ins = graph.input_ports(node.id)
        except (GraphError, KeyError):  # unknown type or malformed params: reported already
            return
        names = {p.name for p in ins}
        for e in graph.in_edges(node.id):
            if e.dst_port not in names:
                self.add(ERROR, "unknown_port",
                         f"a wire from '{e.src}' enters '{node.id}' at '{e.dst_port}', which "
                         f"this block does not have (its inputs: {', '.join(names) or 'none'})",
                         "delete the wire and connect it to an existing input", node.id, path)
        for port in ins:
            wires = [e for e in graph.in_edges(node.id) if e.dst_port == port.name]
            if not wires and port.required:
                self.missing_input(graph, node, port, path)
            if len(wires) > 1:
                self.add(ERROR, "multiple_wires",
                         f"input '{port.name}' of '{node.id}' has {len(wires)} wires (from "
                         + ", ".join(f"'{w.src}'" for w in wires) + "); an input takes one",
                         "delete all but one of them; to sum streams, use an Add block",
                         node.id, path)
            for e in wires:
                self.wire_kind(graph, e, port, path)

    def missing_input(self, graph: Graph, node: Node, port, path) -> None:
        if port.kind == MEMORY:
            what = "cross-attention" if node.type == bt.CROSS_ATTENTION else f"'{node.id}'"
            self.add(ERROR, "cross_attention_without_memory",
                     f"{what} has nothing wired to '{port.name}': cross-attention needs the "
                     "encoder's output to attend over",
                     f"wire the encoder's output (or the group's memory input) into "
                     f"'{node.id}.{port.name}'", node.id, path)
            return
        self.add(ERROR, "unconnected_input",
                 f"input '{port.name}' of '{node.id}' is not connected: it takes "
                 f"{kind_words(port.kind)}",
                 f"wire an output carrying {kind_words(port.kind)} into it", node.id, path)

    def wire_kind(self, graph: Graph, e, port, path) -> None:
        if e.src not in graph.nodes:
            return
        try:
            src_ports = {p.name: p for p in graph.output_ports(e.src)}
        except (GraphError, KeyError):
            return
        out = src_ports.get(e.src_port)
        if out is None:
            self.add(ERROR, "unknown_port",
                     f"the wire into '{e.dst}.{e.dst_port}' leaves '{e.src}' at "
                     f"'{e.src_port}', which that block does not have (its outputs: "
                     f"{', '.join(src_ports) or 'none'})",
                     "delete the wire and draw it from an existing output", e.dst, path)
        elif not kind_accepts(port.kind, out.kind):
            self.add(ERROR, "port_kind_mismatch",
                     f"'{e.src}.{e.src_port}' gives {out.kind} but '{e.dst}.{e.dst_port}' "
                     f"takes {port.kind}",
                     f"connect '{e.dst_port}' to a block that outputs {port.kind}", e.dst, path)


def _ports(graph: Graph, boundary: str) -> list[tuple[str, str]]:
    nodes = graph.nodes_of_type(boundary)
    if not nodes:
        return []
    return parse_port_list(nodes[0].typed_params().ports)


def describe(diagnostics: Iterable[Diagnostic]) -> str:
    """One line per diagnostic, errors first; for logs and the command line."""
    ordered = sorted(diagnostics, key=lambda d: d.severity != ERROR)
    return "\n".join(str(d) for d in ordered)
