"""Group nodes: a sub-graph (one transformer layer, say) repeated N times."""
from ..graph.model import parse_port_list
from ..graph.schema import BlockSpec, ParamSpec, PortSpec, register

GROUP = register(BlockSpec(
    type="group", family="structure", title="Layer group",
    description="A sub-graph repeated `repeat` times with separate weights. The first input is "
                "chained through the copies; other inputs (encoder memory) reach every copy. "
                "Double-click to edit the inside.",
    params=(ParamSpec("repeat", "int", 1, "How many copies are stacked.", minimum=1),),
    count_params=lambda p, s: 0,  # the cost model counts the inside, times repeat
))

GROUP_INPUT = register(BlockSpec(
    type="group_input", family="structure", title="Group inputs",
    description="Inside a group: the values entering the group from outside.",
    params=(ParamSpec("ports", "str", "x:hidden",
                      "The group's inputs as name:kind, comma separated; the first is chained "
                      "through repeats."),),
    internal=True,
    count_params=lambda p, s: 0,
))

GROUP_OUTPUT = register(BlockSpec(
    type="group_output", family="structure", title="Group outputs",
    description="Inside a group: the values leaving the group.",
    params=(ParamSpec("ports", "str", "y:hidden",
                      "The group's outputs as name:kind, comma separated."),),
    internal=True,
    count_params=lambda p, s: 0,
))


def _boundary_ports(params):
    return [PortSpec(n, k) for n, k in parse_port_list(params["ports"])]


GROUP_INPUT.outputs = _boundary_ports
GROUP_OUTPUT.inputs = _boundary_ports
