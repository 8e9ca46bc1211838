"""Wires that never pass under a block: random edit sequences (add, wire, switch, group,
delete, move), made as the editor makes them, leave the top level drawn with no wire through a
block, no two blocks overlapping and no two shape labels overlapping (the geometry is
graph.layout.draw_level, the routing the canvas uses)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfstudio.graph import (AddNode, Connect, Document, Edge, GraphError, MoveNodes, RemoveNodes,
                            ReplaceGraph, group_edit, kept_tidy, new_node)
from tfstudio.graph.layout import (LANE_GAP, _crosses, clear_spot, draw_level, overlapping_labels,
                                   overlapping_pairs, route_lanes, wire_route,
                                   wires_through_blocks)
from tfstudio.graph.layout import untangled
from tfstudio.graph.schema import kind_accepts
from tfstudio.graph.switches import switch_layer
from tfstudio.presets import load_preset

BLOCKS = ("norm", "dropout", "feed_forward", "attention", "add", "positional_encoding")
SWITCHES = (("attention", "gqa"), ("attention", "mha"), ("ffn", "moe"), ("ffn", "ffn"),
            ("activation", "swiglu"), ("placement", "post"), ("placement", "pre"))

edit = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(BLOCKS), st.floats(-300, 1500),
              st.floats(-300, 600)),
    st.tuples(st.just("wire"), st.integers(0, 10_000), st.integers(0, 10_000)),
    st.tuples(st.just("switch"), st.sampled_from(SWITCHES)),
    st.tuples(st.just("group"), st.integers(0, 10_000)),
    st.tuples(st.just("delete"), st.integers(0, 10_000)),
    st.tuples(st.just("move"), st.integers(0, 10_000), st.floats(-400, 400),
              st.floats(-300, 300)),
)


def _apply(doc: Document, step) -> None:
    g = doc.graph(())
    ids = [n.id for n in g if n.type not in ("token_input",)]
    kind = step[0]
    if kind == "add":
        node = new_node(g, step[1], (step[2], step[3]))
        node.pos = clear_spot(g, node, node.pos)
        command = AddNode((), node)
    elif kind == "wire":
        outs = [(n, p) for n in g.nodes for p in g.output_ports(n)]
        ins = [(n, p) for n in g.nodes for p in g.input_ports(n)]
        if not outs or not ins:
            return
        (src, op), (dst, ip) = outs[step[1] % len(outs)], ins[step[2] % len(ins)]
        if not kind_accepts(ip.kind, op.kind):
            return
        command = Connect((), Edge(src, op.name, dst, ip.name))
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
        command = group_edit(doc, (), [plain[step[1] % len(plain)]])
    elif kind == "delete":
        if not ids:
            return
        command = RemoveNodes((), [ids[step[1] % len(ids)]])
    else:
        if not ids:
            return
        node = g.node(ids[step[1] % len(ids)])
        target = clear_spot(g, node, (node.pos[0] + step[2], node.pos[1] + step[3]))
        command = MoveNodes((), {node.id: target})
    try:
        doc.execute(kept_tidy(command))
    except (GraphError, ValueError):
        pass  # a refused edit changes nothing


def _check(steps) -> None:
    doc = Document(untangled(load_preset("tiny-gpt")))
    for step in steps:
        _apply(doc, step)
    graph = doc.graph(())
    drawing = draw_level(graph)
    assert overlapping_pairs(graph) == []
    assert wires_through_blocks(drawing) == []
    assert overlapping_labels(drawing) == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
