"""Group nodes: a sub-graph (one transformer layer, say) repeated N times."""
from ..graph.model import GraphError, Node, parse_port_list
from ..graph.schema import BlockSpec, ParamSpec, Params, PortSpec, register


def _summary(node: Node) -> str:
    """What a layer group holds: attention kind, FFN or MoE, norm placement."""
    from ..graph.switches import layer_summary  # switches read the catalogue this module fills

    try:
        return layer_summary(node)
    except (GraphError, KeyError, ValueError):  # a half-built group still shows its size
        inner = [n for n in (node.subgraph.nodes.values() if node.subgraph else ())
                 if n.type not in (GROUP_INPUT.type, GROUP_OUTPUT.type)]
        return f"{len(inner)} blocks"


GROUP = register(BlockSpec(
    type="group", family="structure", title="Layer group",
    description="A sub-graph repeated `repeat` times with separate weights. The first input is "
                "chained through the copies; other inputs (encoder memory) reach every copy. "
                "Double-click to edit the inside.",
    params=(ParamSpec("repeat", "int", 1, "How many copies are stacked.", minimum=1),),
    count_params=lambda p, s: 0,  # the cost model counts the inside, times repeat
    summary=_summary,
    keywords="layer repeat block stack transformer decoder encoder",
))

GROUP_INPUT = register(BlockSpec(
    type="group_input", family="structure", title="Group inputs",
    description="Inside a group: the values entering the group from outside.",
    params=(ParamSpec("ports", "str", "x:hidden",
                      "The group's inputs as name:kind, comma separated; the first is chained "
                      "through repeats."),),
    internal=True,
    count_params=lambda p, s: 0,
    summary=lambda node: "",
))

GROUP_OUTPUT = register(BlockSpec(
    type="group_output", family="structure", title="Group outputs",
    description="Inside a group: the values leaving the group.",
    params=(ParamSpec("ports", "str", "y:hidden",
                      "The group's outputs as name:kind, comma separated."),),
    internal=True,
    count_params=lambda p, s: 0,
    summary=lambda node: "",
))


def _boundary_ports(params: Params) -> list[PortSpec]:
    return [PortSpec(n, k) for n, k in parse_port_list(params.ports)]


GROUP_INPUT.outputs = _boundary_ports
GROUP_OUTPUT.inputs = _boundary_ports
