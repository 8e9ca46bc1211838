"""A block's and a port's tooltips, without a window (gui/summaries.py): what the block is,
its count and each problem with its fix; what a port carries, its shape or that it is known
once wired, and which way to drag."""
from tfstudio.graph import Disconnect, Document, Edge, validate
from tfstudio.gui.graph_report import report_on_graph
from tfstudio.gui.summaries import node_tooltip, port_shapes, port_tooltip
from tfstudio.presets import load_preset


def test_a_ports_tooltip_names_it_what_it_carries_and_its_shape_once_wired():
    gpt = load_preset("tiny-gpt")
    out = port_tooltip(gpt.output_port("embed", "y"), False, "B×T×64")
    assert "<b>y</b> (output)" in out and "stream of token vectors" in out
    assert "shape: B×T×64" in out and "Drag to an input to wire it." in out
    into = port_tooltip(gpt.input_port("head", "x"), True, None)
    assert "<b>x</b> (input)" in into and "shape: known once wired" in into
    assert "Drag to an output to wire it; drag its wire away to move it." in into


def test_a_blocks_tooltip_lists_its_count_and_each_problem_with_its_fix():
    doc = Document(load_preset("tiny-gpt"))
    head = doc.root.node("head")
    assert "parameters" not in node_tooltip(head)                 # no count while unknown
    assert "8.3k parameters" in node_tooltip(head, params=8_256)
    assert "Fix:" not in node_tooltip(head)
    doc.execute(Disconnect((), Edge("final_norm", "y", "head", "x")))
    problems = [d for d in validate(doc.root) if d.node_id == "head"]
    assert problems
    tip = node_tooltip(head, problems)
    assert f"<b>{problems[0].severity.capitalize()}:</b>" in tip
    assert f"<b>Fix:</b> {problems[0].hint}" in tip


def test_shapes_are_written_on_every_wire_and_none_past_a_missing_wire():
    """Moved from test_feedback (a window's wire items): the words each wire shows."""
    from tfstudio.gui.graph_report import report_on_graph
    from tfstudio.gui.summaries import wire_label
    llama = load_preset("tiny-llama")
    shapes = report_on_graph(llama).shapes
    assert wire_label(shapes, Edge("tokens", "ids", "embed", "ids"), ()) == "B×T"
    assert wire_label(shapes, Edge("embed", "y", "layers", "x"), ()) == "B×T×64"
    assert wire_label(shapes, Edge("final_norm", "y", "head", "x"), ()) == "B×T×64"
    inside = llama.node("layers").subgraph
    assert inside.edges and all(wire_label(shapes, e, ("layers",)) == "B×T×64"
                                for e in inside.edges)
    doc = Document(load_preset("tiny-gpt"))
    assert doc.execute(Disconnect((), Edge("embed", "y", "pos", "x")))
    cut = report_on_graph(doc.graph(())).shapes
    assert wire_label(cut, Edge("tokens", "ids", "embed", "ids"), ()) == "B×T"
    assert wire_label(cut, Edge("pos", "y", "layers", "x"), ()) == ""   # nothing known past it


def test_port_tooltips_name_the_port_what_it_carries_and_its_shape():
    """What the canvas's ports say (scene.apply_report: port_shapes into port_tooltip): moved
    from test_desktop_conventions, where a window showed them."""
    doc = Document(load_preset("tiny-gpt"))

    def tip(node_id: str, is_input: bool, name: str) -> str:
        graph = doc.root
        shapes = port_shapes(report_on_graph(graph).shapes, (), node_id,
                             [p.name for p in graph.input_ports(node_id)],
                             [p.name for p in graph.output_ports(node_id)])
        spec = (graph.input_port if is_input else graph.output_port)(node_id, name)
        return port_tooltip(spec, is_input, shapes[(is_input, name)])
    tip_y = tip("embed", False, "y")
    assert "<b>y</b> (output)" in tip_y and "stream of token vectors" in tip_y
    assert "shape: B×T×64" in tip_y
    # an input that loses its wire loses its shape, and says so
    doc.execute(Disconnect((), Edge("final_norm", "y", "head", "x")))
    assert "shape: known once wired" in tip("head", True, "x")
    assert "shape: B×T×64" in tip("layers", True, "x")            # a frame's port too
