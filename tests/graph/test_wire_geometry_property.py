"""Wires that never pass under a block: random edit sequences (add, drop on a wire (in line,
as the canvas splices), wire, switch, group, delete, move to a clear spot, drag by hand
beside a wired block (28-80 off it, as the canvas allows); at the top level or inside a
layer group, which is what a drop into its open frame edits), made as the editor makes
them, leave every level drawn with no wire through a block, no two blocks overlapping, no
two shape labels overlapping, no label on a block and no two wires sharing a run: the top
level, each group's inside as drawn when entered (graph.layout.draw_level) and each open
frame's small blocks and wires as drawn at the level holding it (graph.layout.draw_frame,
the routing the canvas uses; no labels inside a frame)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfstudio.graph import (AddNode, Document, Edge, GraphError, MoveNodes, RemoveNodes,
                            ReplaceGraph, group_edit, kept_tidy, new_node)
from tfstudio.graph.edit_rules import connect_edit, move_edit, splice_in_line_edit
from tfstudio.graph.layout import (CANVAS_SCALE, GAP_X, LANE_GAP, LEGIBLE_LABEL, NODE_WIDTH,
                                   WIRE_ROOM, _crosses, block_rect, clear_spot, Drawing,
                                   draw_frame, draw_level, label_spots, labels_on_blocks,
                                   labels_on_wires, needs_tidy, overlapping_labels,
                                   overlapping_pairs, route_lanes, shared_runs, wire_route,
                                   wires_through_blocks)
from tfstudio.graph.model import graph_at
from tfstudio.graph.layout import untangled
from tfstudio.graph.schema import kind_accepts
from tfstudio.graph.switches import switch_layer
from tfstudio.presets import load_preset

BLOCKS = ("norm", "dropout", "feed_forward", "attention", "add", "positional_encoding")
SWITCHES = (("attention", "gqa"), ("attention", "mha"), ("ffn", "moe"), ("ffn", "ffn"),
            ("activation", "swiglu"), ("placement", "post"), ("placement", "pre"))

# where an edit acts: 0 the top level, k > 0 inside the (k-1)-th group of the top level
where = st.integers(0, 3)
# a block dropped by hand beside a block it is wired to, closer than a layer's gap (the
# canvas keeps WIRE_ROOM, 28, clear; the other moves keep GAP_X, 80): which neighbour, which
# side of it, how far off it, how far along it
drag = st.tuples(st.just("drag"), st.integers(0, 10_000), st.integers(0, 10_000),
                 st.sampled_from(("right", "left", "above", "below")),
                 st.floats(WIRE_ROOM, GAP_X), st.floats(-150, 150), where)
edit = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(BLOCKS), st.floats(-300, 1500),
              st.floats(-300, 600), where),
    st.tuples(st.just("splice"), st.sampled_from(("dropout", "norm", "feed_forward")),
              st.integers(0, 10_000), where),
    st.tuples(st.just("wire"), st.integers(0, 10_000), st.integers(0, 10_000), where),
    st.tuples(st.just("switch"), st.sampled_from(SWITCHES)),
    st.tuples(st.just("group"), st.integers(0, 10_000), where),
    st.tuples(st.just("delete"), st.integers(0, 10_000), where),
    st.tuples(st.just("move"), st.integers(0, 10_000), st.floats(-400, 400),
              st.floats(-300, 300), where),
    drag,
)
# the canvas's grid (gui/scene.py GRID): a dragged block's corner is on it
GRID = 20.0


def _level(doc: Document, step) -> tuple[str, ...]:
    """The level an edit acts on: the top, or inside one of the top level's groups."""
    k = step[-1] if step[0] != "switch" else 0
    groups = [n.id for n in doc.graph(()) if n.is_group and n.subgraph is not None]
    return (groups[(k - 1) % len(groups)],) if k and groups else ()


def _apply(doc: Document, step) -> None:
    path = _level(doc, step)
    g = doc.graph(path)
    # the group's own inputs and outputs blocks are not deleted, grouped or moved by hand here
    ids = [n.id for n in g if n.type not in ("token_input", "group_input", "group_output")]
    kind = step[0]
    if kind == "add":
        node = new_node(g, step[1], (step[2], step[3]))
        node.pos = clear_spot(g, node, node.pos)
        command = AddNode(path, node)
    elif kind == "splice":  # a block dropped on a wire: at the wire's middle
        if not g.edges:
            return
        edge = g.edges[step[2] % len(g.edges)]
        a, b = g.node(edge.src).pos, g.node(edge.dst).pos
        node = new_node(g, step[1], ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2))
        ruled = splice_in_line_edit(g, path, node, edge)  # in line, as the canvas splices
        if ruled is not None:
            doc.execute(kept_tidy(ruled.edit))
            return
        node.pos = clear_spot(g, node, node.pos)
        command = AddNode(path, node)
    elif kind == "wire":
        outs = [(n, p) for n in g.nodes for p in g.output_ports(n)]
        ins = [(n, p) for n in g.nodes for p in g.input_ports(n)]
        if not outs or not ins:
            return
        (src, op), (dst, ip) = outs[step[1] % len(outs)], ins[step[2] % len(ins)]
        if not kind_accepts(ip.kind, op.kind):
            return
        # as the canvas wires (gui/wire_rules.wiring): room made for the label where needed
        command = connect_edit(g, path, Edge(src, op.name, dst, ip.name)).edit
    elif kind == "switch":
        groups = [n for n in g if n.is_group and n.subgraph is not None]
        if not groups:
            return
        try:
            command = ReplaceGraph((groups[0].id,), switch_layer(groups[0].subgraph, *step[1]))
        except ValueError:
            return  # this layer has no such part (no residual Add to place norms around)
    elif kind == "group":
        plain = [i for i in ids if not g.node(i).is_group]
        if not plain:
            return
        command = group_edit(doc, path, [plain[step[1] % len(plain)]])
    elif kind == "delete":
        if not ids:
            return
        command = RemoveNodes(path, [ids[step[1] % len(ids)]])
    elif kind == "drag":  # as the canvas commits a drag on release (graph.edit_rules.move_edit)
        if not ids:
            return
        node = g.node(ids[step[1] % len(ids)])
        wired = [e.dst if e.src == node.id else e.src for e in g.edges
                 if node.id in (e.src, e.dst) and e.src != e.dst]
        if not wired:
            return
        (x, y, w, h), (_, _, own_w, own_h) = (block_rect(g, n) for n in (
            wired[step[2] % len(wired)], node.id))
        side, gap, along = step[3:6]
        corner = {"right": (x + w + gap, y + along), "left": (x - gap - own_w, y + along),
                  "above": (x + along, y - gap - own_h), "below": (x + along, y + h + gap)}[side]
        target = tuple(round(v / GRID) * GRID / CANVAS_SCALE for v in corner)
        command = move_edit(g, path, {node.id: target}, grid=GRID).edit
    else:
        if not ids:
            return
        node = g.node(ids[step[1] % len(ids)])
        target = clear_spot(g, node, (node.pos[0] + step[2], node.pos[1] + step[3]))
        command = MoveNodes(path, {node.id: target})
    try:
        doc.execute(kept_tidy(command))
    except (GraphError, ValueError):
        pass  # a refused edit changes nothing


def _meets(a, b) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def _a_spot_off_the_wires(drawing, edge: Edge) -> bool:
    """Whether ``edge``'s label had a spot on its wire clear of every block, every other
    label and every other wire (a label over a wire is allowed only where none had)."""
    others = [box for e, box in drawing.labels.items() if e != edge]
    for _, _, box in label_spots(drawing.wires[edge], drawing.labels[edge][2:]):
        if any(_meets(box, b) for b in [*drawing.blocks.values(), *others]):
            continue
        if not labels_on_wires(Drawing(drawing.blocks, drawing.wires, {edge: box})):
            return True
    return False


# every example starts from tiny-gpt as the editor opens it: laid out once, cloned for each
_TINY_GPT = untangled(load_preset("tiny-gpt"))


def _check(steps) -> None:
    doc = Document(_TINY_GPT.clone())
    for step in steps:
        _apply(doc, step)
    _check_drawn(doc.root)


def _check_drawn(root) -> None:
    """Every level of ``root`` drawn clean: the property's assertions."""
    levels = [()] + [p + (n.id,) for p, n in root.walk() if n.subgraph is not None]
    for path in levels:
        graph = graph_at(root, path)
        drawing = draw_level(graph)
        assert overlapping_pairs(graph) == [], path
        assert wires_through_blocks(drawing) == [], path
        assert overlapping_labels(drawing) == [], path
        assert labels_on_blocks(drawing) == [], path
        assert not [e for e, _ in labels_on_wires(drawing) if _a_spot_off_the_wires(drawing, e)]
        assert shared_runs(drawing) == [], path
        for group in (n for n in graph if n.is_group and n.subgraph is not None
                      and len(n.subgraph.nodes)):
            frame = draw_frame(graph, group.id)
            assert wires_through_blocks(frame) == [], (path, group.id)
            rects = list(frame.blocks.items())
            assert not [(a, b) for i, (a, ra) in enumerate(rects) for b, rb in rects[i + 1:]
                        if ra[0] < rb[0] + rb[2] and rb[0] < ra[0] + ra[2]
                        and ra[1] < rb[1] + rb[3] and rb[1] < ra[1] + ra[3]], (path, group.id)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit, min_size=1, max_size=8))
def test_random_edits_leave_no_wire_under_a_block_and_nothing_overlapping(steps):
    _check(steps)


@pytest.mark.slow
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit, min_size=1, max_size=8))
def test_500_random_edit_sequences_leave_no_wire_under_a_block(steps):
    _check(steps)


def test_a_wire_to_a_block_below_a_wide_frame_goes_around_it():
    """The first property run's case, made plain: a block below a frame wider than both
    ends, wired from a block above it. No single channel serves (a leg down would cross
    the frame), so the wire goes around the frame's side."""
    start, end = (100.0, 50.0), (300.0, 400.0)
    frame = (-50.0, 150.0, 600.0, 150.0)          # x, y, width, height: spans both ends
    route = wire_route(start, end, [frame], ends=[(0.0, 0.0, 100.0, 100.0),
                                                  (300.0, 350.0, 190.0, 100.0)])
    assert route is not None and route[0] == start and route[-1] == end
    assert not _crosses(route, [frame], 6.0)
    xs = [x for x, _ in route]
    assert max(xs) > frame[0] + frame[2] or min(xs) < frame[0]   # past one of its sides


def test_parallel_wires_run_on_separate_lanes_with_their_labels_apart():
    """Three wires backwards over the same blocks (the issue's "B×T×64 4" pile-up) each
    take their own run, and their labels do not overlap."""
    blocks = [(0.0, 0.0, 190.0, 100.0), (270.0, 0.0, 190.0, 100.0)]
    lanes, runs = [], []
    for k in range(3):
        route = wire_route((460.0, 40.0 + 10 * k), (0.0, 40.0 + 10 * k), [], ends=blocks,
                           lanes=lanes)
        runs.append(route_lanes(route))
        lanes.extend(route_lanes(route))
    heights = sorted(at for run in runs for axis, at, _, _ in run if axis == 0)
    assert len(heights) == 3
    assert all(b - a >= LANE_GAP for a, b in zip(heights, heights[1:]))


def test_two_wires_turning_down_at_one_place_take_legs_apart():
    """Two wires leaving ports one above the other, both backwards to blocks below: their
    vertical legs would run on one line (tiny-t5's source and target streams); the second
    steps LANE_GAP away."""
    lanes = []
    legs = []
    for k, y in enumerate((45.0, 183.0)):
        route = wire_route((730.0, y), (0.0, 400.0 + 100 * k), [], ends=[
            (530.0, y - 45, 210.0, 106.0), (-10.0, 350.0 + 100 * k, 210.0, 106.0)], lanes=lanes)
        lanes.extend(route_lanes(route))
        legs.append([(at, lo, hi) for axis, at, lo, hi in route_lanes(route) if axis == 1])
    for a in legs[0]:
        for b in legs[1]:
            if a[1] < b[2] and b[1] < a[2]:   # their heights overlap
                assert abs(a[0] - b[0]) >= LANE_GAP


def test_a_wire_into_a_frames_output_clears_a_dead_end_block_in_the_last_column():
    """An edited layer (an FFN removed, attention left a dead end in the output's column):
    the wire into the frame's output port does not cross attention. Two things see to it, and
    the test fails only without both: the output block gets a column of its own, and a wire
    inside a frame turns half as far out of its port (12, the frame's clearance being 6)."""
    _check([("switch", ("ffn", "moe")), ("add", "positional_encoding", 0.0, 230.27, 0),
            ("delete", 76, 3), ("delete", 197, 1), ("move", 389, -0.0, 0.0, 0)])


@pytest.mark.parametrize("steps", [
    [("group", 0, 1), ("move", 0, 0.0, 154.0, 0)],   # the slow property run's case
    [("move", 0, 0.0, 154.0, 0), ("group", 0, 1)],   # the same two edits the other way round
], ids=["group then move", "move then group"])
def test_a_block_grouped_inside_the_layer_leaves_the_wire_to_its_neighbour_room_for_its_label(
        steps):
    """A block grouped inside tiny-gpt's layer widens the layer's open frame by 36 units, into
    the layer's gap (80) before Final norm: 44 were left, more than a wire needs (28) but too
    little for the wire's shape label once Token embedding, moved below, ran its wire up
    between them; the label sat on both blocks. Whichever edit comes first."""
    _check(steps)


@pytest.mark.parametrize("block, corner, neighbour", [
    ("embed", (426.0, -130.0), "pos"),      # Token embedding up, over Positional's corner
    ("pos", (384.0, -130.0), "embed"),      # Positional up, over Token embedding's
    ("layers", (460.0, -220.0), "pos"),     # the layer up, above Positional
], ids=["embedding", "positional", "layer"])
def test_a_label_between_blocks_dragged_close_sits_beside_its_wire_off_both(
        block, corner, neighbour):
    """tiny-gpt's block dragged (grid off: dropped anywhere) above its wired neighbour, 31-32
    units over it: the canvas keeps WIRE_ROOM (28) clear, not a layer's gap (80). The wire
    between them turns back through that gap, where a label over or under its run (17 of
    the 16 each side) met one block or the other. The label sits beside the wire's leg
    instead; the block stays where it was dropped and nothing else moves."""
    doc = Document(untangled(load_preset("tiny-gpt")))
    before = {n.id: n.pos for n in doc.graph(())}
    target = (corner[0] / CANVAS_SCALE, corner[1] / CANVAS_SCALE)
    ruled = move_edit(doc.graph(()), (), {block: target})
    doc.execute(kept_tidy(ruled.edit))
    graph = doc.graph(())
    assert ruled.message == "" and graph.node(block).pos == pytest.approx(target, abs=0.01)
    assert [n.id for n in graph if n.pos != before[n.id]] == [block]
    _, top, _, height = block_rect(graph, block)
    assert 28 <= block_rect(graph, neighbour)[1] - (top + height) < 80
    _check_drawn(doc.root)   # no label on a block, and every other check of the property


def test_a_block_dropped_too_close_for_its_wires_label_moves_the_least_that_gives_it_room():
    """Inside tiny-gpt's layer (its first norm grouped), the FFN dropped 30 units left of the
    Add it feeds, level with it: the wire runs straight across the gap, narrower than its
    label (48; 56 as a laptop shows it at 70%), so no spot on it is off both blocks. The drop
    moves left along its row as little as gives the label room (not a whole layer's gap,
    which would send it 177 up), and says why; dropped 90 units off, it stays put."""
    for gap, kept in ((30.0, False), (90.0, True)):
        doc = Document(untangled(load_preset("tiny-gpt")))
        doc.execute(kept_tidy(group_edit(doc, ("layers",), ["norm_attn"])))
        graph = doc.graph(("layers",))
        x, y, _, _ = block_rect(graph, "add_ffn")
        target = ((x - gap - NODE_WIDTH) / CANVAS_SCALE, (y - 2.0) / CANVAS_SCALE)
        ruled = move_edit(graph, ("layers",), {"ffn": target})
        doc.execute(kept_tidy(ruled.edit))
        fx, fy, fw, _ = block_rect(graph, "ffn")
        if kept:
            assert graph.node("ffn").pos == pytest.approx(target, abs=0.01), gap
            assert ruled.message == "" and x - (fx + fw) == pytest.approx(gap, abs=0.02)
        else:
            assert "room for the wire's shape label" in ruled.message
            assert fy == pytest.approx(target[1] * CANVAS_SCALE, abs=0.02)
            assert LEGIBLE_LABEL[0] <= x - (fx + fw) < GAP_X   # room for it at 70% zoom
        _check_drawn(doc.root)


def test_a_block_dropped_beside_the_block_it_feeds_leaves_room_for_the_label_between_them():
    """The drag property run's case: the layer's second Add dropped 28 right of the FFN that
    feeds it was put 40 off it, its label then on the wire's loop round the other wires;
    a later drag elsewhere (attention, right of its norm) changed that loop and the label
    landed on the Add. Blocks side by side keep a label's width between them at the drop."""
    _check([("drag", 0, 1, "right", 28.0, 0.0, 1), ("drag", 77, 1, "right", 28.0, 0.0, 1),
            ("drag", 1, 0, "right", 28.0, 11.0, 1)])


def test_a_wire_routed_after_a_level_curve_keeps_its_run_off_that_line():
    """The drag property run's case: the layer's second norm dropped 51 left of the attention
    (beside the stream's level curve from the inputs to the first Add, 620 long at y 183):
    the wire from that norm on to the FFN, routed after the curve, ran back along it 1 unit
    off, as the curve counted for no lane. A level curve is a lane now."""
    _check([("drag", 3, 0, "left", 51.0, 53.0, 1)])
    assert route_lanes(None, (0.0, 183.0), (620.0, 183.0)) == [(0, 183.0, 0.0, 620.0)]
    assert route_lanes(None, (0.0, 183.0), (620.0, 240.0)) == []   # a bend: no straight run


def test_crossing_wires_between_two_blocks_keep_their_labels_apart():
    """A group inside a group whose inputs cross into an Add: every spot above one wire is
    under the other's label, so the label goes below its wire."""
    _check([("group", 4826, 3), ("group", 4826, 3), ("group", 1215, 1)])


def test_blocks_closer_than_a_wire_needs_are_tidied():
    """A group made from a block is wider than the block and can end up 14 units from a
    neighbour's input, too close for the wire into it (it turns 24 out of its port): such a
    level counts as needing a tidy, as an overlap does; 40 apart it does not."""
    for gap, expected in ((14.0, True), (40.0, False)):
        graph = untangled(load_preset("tiny-gpt"))
        pos, head = graph.node("pos"), graph.node("head")
        head.pos = ((pos.pos[0] * CANVAS_SCALE + NODE_WIDTH + gap) / CANVAS_SCALE, pos.pos[1])
        assert overlapping_pairs(graph) == []
        assert needs_tidy(graph) is expected, gap


def test_a_wire_drawn_inside_a_group_makes_its_frame_room_at_the_level_above():
    """A wire inside a group changes how its open frame lays the inside out (the frame
    grows); the blocks beside the frame at the top level move out of its way, as they do
    when a block is added inside."""
    _check([("add", "attention", -25.2, 134.9, 1), ("wire", 1, 924, 2)])


def test_two_blocks_without_wires_in_a_wrapped_level_do_not_land_on_one_spot():
    """The property run's case once blocks without wires took the column nearest where they
    were put: the Token input left without a reader and a new Norm both waited "in front of"
    the next band, on one spot. A block with no wires now stays in its own band."""
    _check([("group", 2, 0), ("delete", 0, 0), ("splice", "dropout", 0, 0),
            ("add", "norm", 0.0, 0.0, 0), ("add", "norm", 0.0, 0.0, 0), ("group", 0, 0)])


def test_no_label_of_t5s_decoder_sits_over_another_wire():
    """t5-small's decoder entered: "B×T×512" sat over the vertical residual at the
    Cross-attention's right, and six more labels over other wires' runs; each takes a spot
    off the other wires now."""
    decoder = untangled(load_preset("t5-small")).node("decoder").subgraph
    drawing = draw_level(decoder)
    assert labels_on_wires(drawing) == []
    assert labels_on_blocks(drawing) == [] and overlapping_labels(drawing) == []


def test_the_checkers_find_a_wire_through_a_block_and_a_label_over_a_wire_whichever_way_it_runs():
    """The checkers above on drawings made by hand: a wire across a block (from either side,
    down, up, or ending inside it) is found, one beside it is not; a label over another wire's
    run, across or along it, is found, one clear of it is not. (Each test above asserts they
    find nothing, which a checker that never finds anything would pass too.)"""
    wire, other = Edge("a", "out", "b", "in"), Edge("c", "out", "d", "in")
    ends = {"a": (-300.0, 0.0, 20.0, 20.0), "b": (300.0, 0.0, 20.0, 20.0)}
    block = {"x": (40.0, 40.0, 20.0, 20.0)}                      # x 40-60, y 40-60
    across = {"left to right": [(0.0, 50.0), (100.0, 50.0)],
              "right to left": [(100.0, 50.0), (0.0, 50.0)],
              "down": [(50.0, 0.0), (50.0, 100.0)], "up": [(50.0, 100.0), (50.0, 0.0)],
              "ending inside": [(0.0, 50.0), (50.0, 50.0)]}
    for name, points in across.items():
        assert wires_through_blocks(Drawing({**ends, **block}, {wire: points}, {})) == [
            (wire, "x")], name
    beside = Drawing({**ends, **block}, {wire: [(0.0, 30.0), (100.0, 30.0)]}, {})
    assert wires_through_blocks(beside) == []

    runs = {wire: [(0.0, 50.0), (100.0, 50.0)], other: [(50.0, 0.0), (50.0, 100.0)]}
    over_the_leg = {wire: (44.0, 20.0, 12.0, 12.0)}                # x 44-56, y 20-32
    over_the_run = {other: (20.0, 44.0, 12.0, 12.0)}               # x 20-32, y 44-56
    clear = {wire: (70.0, 20.0, 12.0, 12.0)}
    assert labels_on_wires(Drawing(ends, runs, over_the_leg)) == [(wire, other)]
    assert labels_on_wires(Drawing(ends, runs, over_the_run)) == [(other, wire)]
    assert labels_on_wires(Drawing(ends, runs, clear)) == []


def test_a_wire_with_no_room_for_a_lanes_gap_still_keeps_off_the_other_wires_run():
    """A property run's case: three norms added and one dragged below the layer, then grouped.
    Inside the layer, the wire from the new group into add_ffn must pass norm_ffn's wire's leg in
    a narrow pass between blocks, where no way keeps LANE_GAP; it ran along that wire's run
    (y=426) instead of beside it."""
    steps = [("add", "norm", 0, 0, 1)] * 3 + [("drag", 192, 1, "below", 48.0, 41.0, 1),
                                              ("group", 65, 1)]
    doc = Document(_TINY_GPT.clone())
    for step in steps:
        _apply(doc, step)
    drawing = draw_level(graph_at(doc.root, ("layers",)))
    assert shared_runs(drawing) == []
    _check(steps)


def test_a_wire_between_blocks_closer_than_its_label_moves_the_block_it_enters_clear():
    """A random draw: a Dropout spliced into a layer lands 30 units beside norm_ffn, then a
    wire joins them. The wire alone leaves its 48-unit label on norm_ffn; the canvas's wiring
    (connect_edit) moves the Dropout clear in the same undo step and says so."""
    from tfstudio.graph import Connect
    from tfstudio.graph.layout import LEGIBLE_LABEL
    doc = Document(_TINY_GPT.clone())
    for step in [("add", "norm", 0, 0, 1)] * 3 + [("drag", 192, 1, "below", 48.0, 41.0, 1),
                 ("add", "norm", 0, 0, 1), ("splice", "dropout", 348, 1)]:
        _apply(doc, step)
    path, edge = ("layers",), Edge("norm_ffn", "y", "dropout1", "x")
    plain = Document(doc.root.clone())
    plain.execute(Connect(path, edge))
    assert {e for e, _ in labels_on_blocks(draw_level(plain.graph(path), LEGIBLE_LABEL))} == {
        edge}
    before = {n.id: n.pos for n in doc.graph(path)}
    ruled = connect_edit(doc.graph(path), path, edge)
    doc.execute(kept_tidy(ruled.edit))
    _check_drawn(doc.root)
    assert ruled.message == ("Moved dropout1 a little clear of norm_ffn: room for the wire's "
                             "shape label")
    after = {n.id: n.pos for n in doc.graph(path)}
    assert [i for i in before if after[i] != before[i]] == ["dropout1"]
    doc.undo()   # one step takes back the wire and the move
    assert edge not in doc.graph(path).edges
    assert {n.id: n.pos for n in doc.graph(path)} == before
