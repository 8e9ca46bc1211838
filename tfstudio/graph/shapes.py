"""Shape inference: a symbolic shape on every wire, at every depth of groups.

Shapes are tuples like ("B", "T", 768): "B" is the batch, "T" the (target) length, "S" the
source length of an encoder-decoder. A port whose shape cannot be known (an unconnected input
upstream, a cycle) simply has none; validation reports why.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .model import GROUP, GROUP_INPUT, GROUP_OUTPUT, Graph, GraphError
from .schema import get_spec

Key = tuple[tuple[str, ...], str]  # (path of group ids, node id)


@dataclass
class ShapeMap:
    inputs: dict[Key, dict[str, tuple]] = field(default_factory=dict)
    outputs: dict[Key, dict[str, tuple]] = field(default_factory=dict)
    errors: dict[Key, str] = field(default_factory=dict)
    codes: dict[Key, str] = field(default_factory=dict)  # stable rule id of each error

    def _fail(self, key: Key, message: str, code: str = "shape_inference") -> None:
        self.errors[key] = message
        self.codes[key] = code

    def input_shapes(self, node_id: str, path: tuple[str, ...] = ()) -> dict[str, tuple]:
        return self.inputs.get((tuple(path), node_id), {})

    def output_shapes(self, node_id: str, path: tuple[str, ...] = ()) -> dict[str, tuple]:
        return self.outputs.get((tuple(path), node_id), {})

    def edge_shape(self, edge, path: tuple[str, ...] = ()) -> tuple | None:
        return self.output_shapes(edge.src, path).get(edge.src_port)


def infer_shapes(graph: Graph) -> ShapeMap:
    out = ShapeMap()
    _infer(graph, (), {}, out)
    return out


def _infer(graph: Graph, path: tuple[str, ...], boundary_in: dict[str, tuple],
           out: ShapeMap) -> dict[str, tuple]:
    """Infer ``graph``; ``boundary_in`` feeds its group_input. Returns its group_output's inputs."""
    try:
        order = graph.topo_order()
    except GraphError:
        return {}
    produced: dict[tuple[str, str], tuple] = {}
    result: dict[str, tuple] = {}
    for nid in order:
        node = graph.nodes[nid]
        ins = _connected_inputs(graph, nid, produced)
        key = (path, nid)
        out.inputs[key] = ins
        if node.type == GROUP_OUTPUT:
            result = dict(ins)
        try:
            outs = _outputs_of(graph, node, path, ins, boundary_in, out)
        except Exception as exc:  # a block's hook failing must not stop the rest of the graph
            out._fail(key, f"cannot infer shapes: {exc}")
            outs = {}
        out.outputs[key] = outs
        for port, shape in outs.items():
            produced[(nid, port)] = shape
    return result


def _connected_inputs(graph: Graph, nid: str,
                      produced: dict[tuple[str, str], tuple]) -> dict[str, tuple]:
    """The shapes arriving at ``nid``'s input ports, by port (unknown ones left out)."""
    ins = {}
    for e in graph.in_edges(nid):
        shape = produced.get((e.src, e.src_port))
        if shape is not None:
            ins[e.dst_port] = shape
    return ins


def _outputs_of(graph: Graph, node, path: tuple[str, ...], ins: dict[str, tuple],
                boundary_in: dict[str, tuple], out: ShapeMap) -> dict[str, tuple]:
    """One node's output shapes, by port: a group's from its sub-graph, a block's from its
    spec's ``infer`` hook."""
    if node.type == GROUP_INPUT:
        return dict(boundary_in)
    if node.type == GROUP_OUTPUT:
        return {}
    if node.type == GROUP:
        return _infer_group(graph, node, path, ins, out)
    spec = get_spec(node.type)
    # a malformed parameter (reported by validation) leaves the outputs unknown
    known = spec.infer is not None and spec.well_formed(node.params)
    return dict(spec.infer(node.resolved_params(), ins)) if known else {}


def _infer_group(graph: Graph, node, path, ins: dict[str, tuple], out: ShapeMap):
    if node.subgraph is None:
        return {}
    inner_path = path + (node.id,)
    outs = _infer(node.subgraph, inner_path, ins, out)
    in_ports = [p.name for p in graph.input_ports(node.id)]
    out_ports = [p.name for p in graph.output_ports(node.id)]
    # a repeated group feeds its first output back into its first input: the shapes must agree
    if int(node.typed_params().repeat) > 1 and in_ports and out_ports:
        given, taken = ins.get(in_ports[0]), outs.get(out_ports[0])
        if given is not None and taken is not None and given != taken:
            out._fail((path, node.id),
                      f"a repeated group must give back the shape it takes: input "
                      f"'{in_ports[0]}' is {given} but output '{out_ports[0]}' is {taken}",
                      "repeat_shape_changes")
    return outs
