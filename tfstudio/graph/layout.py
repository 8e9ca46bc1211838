"""Tidy layout: where blocks go so that none overlaps and the residual stream runs straight.

Blocks are placed in layers left to right (networkx's topological generations, then pulled
right towards their readers), the residual stream (the spine) on one straight row, and other
blocks in rows above and below it ordered by where their neighbours sit (the barycentre
heuristic, which keeps wires from crossing). No Qt: block sizes are estimated here from the
same geometry the canvas draws with (``gui/node_item.py`` takes its constants from this
module), so the layout and the drawing cannot drift apart. Sizes and the positions computed
from them are in canvas units; graph positions are canvas positions / :data:`CANVAS_SCALE`.
"""
from __future__ import annotations


import heapq
import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping, NamedTuple

from .block_types import ADD, NORM
from .model import (GROUP_INPUT, GROUP_OUTPUT, Edge, Graph, GraphError, Node, graph_at,
                    group_boundary, parse_port_list)
from .placement import residual_structure
from .schema import BlockSpec, UnknownBlockError, get_spec

if TYPE_CHECKING:   # networkx loads on the first layout, not before the editor's first paint
    import networkx as nx

# Graph positions are compact (presets step (NODE_WIDTH + GAP_X) / CANVAS_SCALE between blocks);
# the canvas spreads them by this factor so the wire between two neighbours is long enough to
# carry its shape label.
CANVAS_SCALE = 1.3

# ----------------------------------------------------------------- block geometry (canvas units)
NODE_WIDTH = 190.0
GROUP_WIDTH = 220.0
HEADER_H = 30.0
ROW_H = 22.0
SUMMARY_H = 17.0
GAP_X = 80.0      # between layers: room for a wire's shape label
GAP_Y = 40.0      # between rows
BAND_GAP = 46.0   # between the bands of a wrapped layout: the channel its wires run along
# the wrapped layouts tried in turn until one shows whole on a laptop: (sublayers in line,
# row gap, band gap); the closest still leaves a channel two wires and a label fit in
WRAP_TRIES = ((False, GAP_Y, BAND_GAP), (True, GAP_Y, BAND_GAP), (True, 24.0, 34.0))
# the least room between two blocks: a wire leaves a port for LEADS[0] (24) before it turns,
# and its leg keeps half a clearance off the other block's ports (10 + 6, less the 12 the
# port stub may come close)
WIRE_ROOM = 28.0
# a model's top level wraps at this width: at 70% zoom it fits the canvas of a 1366x768 window
# (whose docks leave the canvas about 710 pixels)
WRAP_WIDTH = 1000.0
# what a 1366x768 laptop's canvas shows at the legible zoom (70%), margins off (canvas units):
# a wrapped layout is chosen to fit this box
LAPTOP_BOX = (1000.0, 800.0)
# a wire's shape label ("B×T×64") as a 1366x768 laptop shows it at that zoom (70%: its text
# enlarged to 11 px, 55 x 15 units, where 100% draws 48 x 14): a drop by hand leaves it room
LEGIBLE_LABEL = (56.0, 16.0)

# a layer group drawn open: its inside as small read-only blocks in a frame, as compact as
# their words allow (so tiny-t5's encoder and decoder are whole on a 1366x768 laptop at 70%)
MINI_W = 132.0
MINI_H = 74.0     # a title line and three summary lines ("8 heads · bidirectional · alibi")
NORM_MINI_W = 96.0   # "Norm / layernorm"
ADD_MINI = (56.0, 40.0)  # the residual sum: its title alone, a junction on the stream
FRAME_PAD = 8.0
FRAME_FOOT = 4.0
INNER_GAP_X = 12.0
INNER_GAP_Y = 8.0
BOUNDARY_W = 1.0  # the group's own input / output blocks are points on the frame's edges
# an open frame's inside wider than this wraps into bands: the frame then fits the wrap width
FRAME_WRAP = WRAP_WIDTH - 2 * FRAME_PAD

Position = tuple[float, float]


@dataclass(frozen=True)
class BlockSize:
    """A block's drawn size; ``anchor`` is the height of its main stream port, the line that
    a row of blocks is aligned on (so the stream between them is a straight wire)."""

    width: float
    height: float
    anchor: float


@dataclass(frozen=True)
class Frame:
    """An open layer group: its size, where each inner block sits (relative to the frame's
    corner), and the heights of its input and output ports on the frame's edges."""

    size: BlockSize
    inner: dict[str, Position]
    inner_sizes: dict[str, BlockSize]
    input_ys: list[float]
    output_ys: list[float]


def port_y(index: int) -> float:
    """Height of a closed block's ``index``-th port row (inputs left, outputs right)."""
    return HEADER_H + ROW_H * (index + 0.5) + 4


def closed_size(rows: int, is_group: bool) -> BlockSize:
    height = HEADER_H + ROW_H * rows + 8 + SUMMARY_H * 2 + 4
    if is_group:
        height += SUMMARY_H  # summaries of layers run to two lines
    return BlockSize(GROUP_WIDTH if is_group else NODE_WIDTH, height, port_y(0))


def _keep(store: dict, key, value, most: int) -> None:
    """``store[key] = value``, the oldest entry let go first when ``store`` holds ``most``."""
    if len(store) >= most:
        del store[next(iter(store))]
    store[key] = value


# a block's rows of ports by its type and parameters (all they depend on, while its spec is
# the one registered): every block size asks again, and listing ports checks the parameters
_PORT_ROWS: dict[tuple[str, str], tuple[BlockSpec, int]] = {}
_PORT_ROWS_KEPT = 1024


def _registered(block_type: str) -> BlockSpec | None:
    try:
        return get_spec(block_type)
    except UnknownBlockError:
        return None


def _port_rows(graph: Graph, node_id: str) -> int:
    node = graph.nodes.get(node_id)
    key = spec = None
    if node is not None and not node.is_group:  # a group's ports are its inside's
        key = (node.type, repr(node.params))
        spec = _registered(node.type)
        kept = _PORT_ROWS.get(key)
        if kept is not None and spec is not None and kept[0] is spec:
            return kept[1]
    try:
        rows = max(len(graph.input_ports(node_id)), len(graph.output_ports(node_id)))
    except GraphError:
        rows = 1
    if key is not None and spec is not None:
        _keep(_PORT_ROWS, key, (spec, rows), _PORT_ROWS_KEPT)
    return rows


def block_size(graph: Graph, node_id: str, open_groups: bool = True) -> BlockSize:
    """The size the canvas draws ``node_id`` at (a layer group open unless ``open_groups`` is
    False)."""
    node = graph.node(node_id)
    if node.is_group and open_groups and node.subgraph is not None and len(node.subgraph.nodes):
        return group_frame(graph, node_id).size
    return closed_size(_port_rows(graph, node_id), node.is_group)


def _mini_size(node: Node) -> BlockSize:
    if node.type in (GROUP_INPUT, GROUP_OUTPUT):  # a point on the stream's row
        return BlockSize(BOUNDARY_W, ADD_MINI[1], ADD_MINI[1] / 2)
    if node.type == ADD:
        return BlockSize(*ADD_MINI, ADD_MINI[1] / 2)
    width = NORM_MINI_W if node.type == NORM else MINI_W
    return BlockSize(width, MINI_H, MINI_H / 2)


# the frames laid out lately, by what their layout reads (``_inside_key``): every block's
# size, wire and drawing asks for the frame of each open group again, and its layout is the
# editor's costliest step
_FRAMES: dict[tuple, Frame] = {}
_FRAMES_KEPT = 256


def _inside_key(inside: Graph) -> tuple:
    """Everything of a group's inside that its frame is laid out from: each block's id, type,
    parameters (its ports), position (a loose block's column) and nested inside, and the
    wires in their order (a wire closing a cycle is the last one found)."""
    return (tuple((nid, n.type, repr(n.params), n.pos,
                   None if n.subgraph is None else _inside_key(n.subgraph))
                  for nid, n in inside.nodes.items()), tuple(inside.edges))


def group_frame(graph: Graph, group_id: str) -> Frame:
    """How an open group is drawn: its inside laid out small, framed, ports on the edges at
    the height of the inside's stream. The same inside gives the same frame object (kept
    from the last layout of it): read it, never change it."""
    group = graph.node(group_id)
    inside = group.subgraph if group.subgraph is not None else Graph()
    key = (group.type, _inside_key(inside))
    frame = _FRAMES.get(key)
    if frame is None:
        frame = _laid_out_frame(graph, group_id, inside)
        _keep(_FRAMES, key, frame, _FRAMES_KEPT)
    return frame


def _laid_out_frame(graph: Graph, group_id: str, inside: Graph) -> Frame:
    sizes = {nid: _mini_size(n) for nid, n in inside.nodes.items()}
    placed = layered_positions(inside, sizes, INNER_GAP_X, INNER_GAP_Y)
    if placed and _placed_extent(placed, sizes)[0] > FRAME_WRAP:
        # four sublayers in a row (gpt3-style-local) run past a laptop's canvas: two bands
        filled, even = (layered_positions(inside, sizes, INNER_GAP_X, INNER_GAP_Y,
                                          wrap=FRAME_WRAP, balance=balance)
                        for balance in (False, True))
        # even bands are never wider: two sublayers and two, where that is no taller
        no_taller = _placed_extent(even, sizes)[1] <= _placed_extent(filled, sizes)[1] + 0.5
        placed = even if no_taller else filled
    top = HEADER_H + SUMMARY_H + FRAME_PAD
    inner = {nid: (x + FRAME_PAD, y + top) for nid, (x, y) in placed.items()}
    right = max((inner[n][0] + sizes[n].width for n in inner), default=FRAME_PAD)
    bottom = max((inner[n][1] + sizes[n].height for n in inner), default=top)
    stream = _stream_height(inside, inner, sizes, top)
    ins = _port_count(graph.input_ports, group_id)
    outs = _port_count(graph.output_ports, group_id)
    input_ys = [stream + ROW_H * i for i in range(ins)]
    # the stream leaves where it ends: the last band's row when the inside is wrapped
    out_stream = _stream_height(inside, inner, sizes, top, GROUP_OUTPUT, stream)
    output_ys = [out_stream + ROW_H * i for i in range(outs)]
    height = max(bottom, *(input_ys or [0]), *(output_ys or [0])) + FRAME_PAD + FRAME_FOOT
    width = max(GROUP_WIDTH, right + FRAME_PAD)
    return Frame(BlockSize(width, height, stream), inner, sizes, input_ys, output_ys)


def _port_count(ports_fn, node_id: str) -> int:
    try:
        return len(ports_fn(node_id))
    except GraphError:
        return 0


def _stream_height(inside: Graph, inner: Mapping[str, Position],
                   sizes: Mapping[str, BlockSize], top: float, boundary: str = GROUP_INPUT,
                   default: float | None = None) -> float:
    """Where the inside's stream enters (or, for the group output, leaves): the boundary
    block's anchor (else ``default``, else the top)."""
    ends = inside.nodes_of_type(boundary)
    if ends and ends[0].id in inner:
        return inner[ends[0].id][1] + sizes[ends[0].id].anchor
    return default if default is not None else top + MINI_H / 2


# ----------------------------------------------------------------- the layered layout
def _acyclic(graph: Graph) -> nx.DiGraph:
    """The wiring as a simple DAG in node order (a wire closing a cycle is left out, so an
    invalid graph can still be tidied)."""
    import networkx as nx

    dag = nx.DiGraph()
    dag.add_nodes_from((nid, {"type": n.type}) for nid, n in graph.nodes.items())
    for e in graph.edges:
        if e.src in graph.nodes and e.dst in graph.nodes and e.src != e.dst:
            dag.add_edge(e.src, e.dst)
    while True:
        try:
            cycle = nx.find_cycle(dag)
        except nx.NetworkXNoCycle:
            return dag
        dag.remove_edge(*cycle[-1][:2])


def spine(graph: Graph, dag: nx.DiGraph | None = None) -> list[str]:
    """The residual stream: in a layer, the group input, each sublayer's Add (and post norm)
    and the group output; elsewhere the longest chain of blocks."""
    import networkx as nx

    dag = dag if dag is not None else _acyclic(graph)
    structure = residual_structure(graph)
    if structure is not None and structure.sublayers:
        path = [structure.start[0]]
        for sub in structure.sublayers:
            path += [sub.add] + ([sub.post_norm] if sub.post_norm else [])
        ends = [n.id for n in graph.nodes_of_type(GROUP_OUTPUT) if dag.has_edge(path[-1], n.id)]
        return path + ends[:1]
    return _longest_chain(dag)


def _longest_chain(dag: nx.DiGraph) -> list[str]:
    import networkx as nx

    return nx.dag_longest_path(dag) if len(dag) else []


def _layers(dag: nx.DiGraph, on_spine: set[str], pull: bool = True) -> dict[str, int]:
    import networkx as nx

    layer = {n: i for i, gen in enumerate(nx.topological_generations(dag)) for n in gen}
    _outputs_last(dag, layer)
    if not pull:
        return layer
    # a block off the spine sits just before the first block that reads it, so its wires stay
    # short (the target embedding of an encoder-decoder waits beside the decoder)
    for n in reversed(list(nx.topological_sort(dag))):
        readers = list(dag.successors(n))
        if n not in on_spine and readers:
            layer[n] = max(layer[n], min(layer[r] for r in readers) - 1)
    return layer


def _loose_by_their_place(graph: Graph, dag: nx.DiGraph, layer: dict[str, int]) -> None:
    """A block with no wires yet (just dropped into an open frame) takes the column of the
    wired block nearest where it was put, not the first column: it shows where it went."""
    wired = [n for n in layer if dag.degree(n)]
    for n in layer:
        if dag.degree(n) or not wired or dag.nodes[n].get("type") in (GROUP_INPUT, GROUP_OUTPUT):
            continue
        x, y = graph.nodes[n].pos
        near = min(wired, key=lambda m: (graph.nodes[m].pos[0] - x) ** 2
                   + (graph.nodes[m].pos[1] - y) ** 2)
        layer[n] = layer[near]


def _outputs_last(dag: nx.DiGraph, layer: dict[str, int]) -> None:
    """A group's output block in a column after every other block: its port is on the
    frame's right edge, and a wire into it needs the room before that edge clear (an edited
    layer can leave a dead-end block in the output's column)."""
    ends = [n for n in layer if dag.nodes[n].get("type") == GROUP_OUTPUT]
    others = [layer[n] for n in layer if n not in ends]
    for n in ends:
        layer[n] = max([layer[n]] + [k + 1 for k in others])


def _rows(graph: Graph, dag: nx.DiGraph, layer: dict[str, int],
          on_spine: set[str]) -> dict[str, int]:
    """Row 0 is the spine; each other block takes the free row nearest its neighbours' mean
    (above the spine before below it). A wire that skips layers keeps its row free in the
    layers it crosses, so no block sits on it (the residual skip, an encoder's memory)."""
    order = {n: i for i, n in enumerate(graph.nodes)}
    row = {n: 0 for n in on_spine}
    crossed: dict[int, set[int]] = {}
    for n in on_spine:
        _reserve_crossings(dag, layer, row, n, crossed)
    by_layer: dict[int, list[str]] = {}
    for n in sorted(layer, key=lambda n: (layer[n], order[n])):
        by_layer.setdefault(layer[n], []).append(n)
    for k in sorted(by_layer):
        taken = set(crossed.get(k, set()))
        taken |= {0} if any(n in on_spine for n in by_layer[k]) else set()
        wanted = [(_barycentre(dag, n, row), order[n], n)
                  for n in by_layer[k] if n not in on_spine]
        for target, _, n in sorted(wanted):
            row[n] = _nearest_free(target, taken)
            taken.add(row[n])
            _reserve_crossings(dag, layer, row, n, crossed)
    return row


def _reserve_crossings(dag: nx.DiGraph, layer: Mapping[str, int], row: Mapping[str, int],
                       n: str, crossed: dict[int, set[int]]) -> None:
    for reader in dag.successors(n):
        for k in range(layer[n] + 1, layer[reader]):
            crossed.setdefault(k, set()).add(row[n])


def _barycentre(dag: nx.DiGraph, n: str, row: Mapping[str, int]) -> float:
    near = [row[p] for p in dag.predecessors(n) if p in row]
    if not near:
        near = [row[s] for s in dag.successors(n) if s in row]
    # a chain of its own (tiny-t5's target tokens) goes below the spine, read after it
    return sum(near) / len(near) if near else 1.0


def _nearest_free(target: float, taken: set[int]) -> int:
    candidates = sorted(range(-50, 51), key=lambda r: (abs(r - target), r > 0, abs(r)))
    return next(r for r in candidates if r not in taken)


def layered_positions(graph: Graph, sizes: Mapping[str, BlockSize], gap_x: float = GAP_X,
                      gap_y: float = GAP_Y, wrap: float | None = None,
                      chain: bool = False, band_gap: float = BAND_GAP,
                      balance: bool = False) -> dict[str, Position]:
    """Top-left corners (canvas units, the whole starting at 0, 0) laying ``graph`` out in
    layers with the spine on one row, every block's main port on its row's line. With
    ``wrap``, layers that would run past that width continue in a band below (as text wraps),
    so a whole model fits a laptop's canvas at a legible zoom. With ``chain`` the spine is
    the longest chain of blocks even in a layer (its sublayers in line, the residual wires
    routed past them): a row per band, where the stream's row and its branches' take two.
    With ``balance`` the bands are as even as their number allows (two sublayers and two,
    not three and one)."""
    if not graph.nodes:
        return {}
    return _banded(graph, sizes, _grid(graph, chain, wrapped=wrap is not None), gap_x, gap_y,
                   wrap, band_gap, balance)


class _Grid(NamedTuple):
    """Each block's column (``layer``) and row, and the spine: the layout before it is cut
    into bands, the same at every wrap width."""
    dag: nx.DiGraph
    on_spine: set[str]
    layer: dict[str, int]
    row: dict[str, int]


def _grid(graph: Graph, chain: bool, wrapped: bool) -> _Grid:
    dag = _acyclic(graph)
    on_spine = set(_longest_chain(dag) if chain else spine(graph, dag))
    # wrapped, a block off the spine stays in its own column rather than wait beside its
    # reader in a later band: a whole band of rows would otherwise hold it alone (tiny-t5's
    # target embedding sits under the source's, its wire runs down to the decoder)
    layer = _layers(dag, on_spine, pull=not wrapped)
    _loose_by_their_place(graph, dag, layer)
    return _Grid(dag, on_spine, layer, _rows(graph, dag, layer, on_spine))


def _banded(graph: Graph, sizes: Mapping[str, BlockSize], grid: _Grid, gap_x: float,
            gap_y: float, wrap: float | None, band_gap: float,
            balance: bool) -> dict[str, Position]:
    """``grid``'s columns cut into bands no wider than ``wrap``, placed (layered_positions)."""
    dag, on_spine, layer, row = grid
    widths = [max(sizes[n].width for n in layer if layer[n] == k)
              for k in range(max(layer.values()) + 1)]
    # a layer wider than ``wrap`` (an open layer group) sets the picture's width anyway: the
    # bands may fill that width, rather than leave short blocks alone on rows of their own
    bands = _bands(widths, gap_x, max(wrap, max(widths)) if wrap is not None else None,
                   balance)
    band_of = {k: i for i, band in enumerate(bands) for k in band}
    # a source whose readers open the next band waits in front of them there, not at the end
    # of the band before (a decoder's token input beside its embedding)
    ahead = {n: band_of[layer[n]] + 1 for n in graph.nodes
             if n not in on_spine and _is_source(dag, n) and band_of[layer[n]] + 1 < len(bands)
             and dag.out_degree(n)  # a block with no wires stays in its own band
             and all(layer[r] == bands[band_of[layer[n]] + 1][0] for r in dag.successors(n))}
    placed: dict[str, Position] = {}
    top = 0.0
    for i, band in enumerate(bands):
        members = [n for n in graph.nodes
                   if ahead.get(n, band_of[layer[n]]) == i]
        front = max((sizes[n].width for n in members if ahead.get(n) == i), default=0.0)
        start = front + gap_x if front else 0.0
        column_x = dict(zip(band, (x + start for x in _offsets([widths[k] for k in band],
                                                                  gap_x))))
        line_y = _row_lines(sizes, {n: row[n] for n in members}, gap_y)
        tops = {n: line_y[row[n]] - sizes[n].anchor for n in members}
        shift = top - min(tops.values())
        for n in members:
            if ahead.get(n) == i:
                x = front - sizes[n].width
            else:
                x = column_x[layer[n]]
                if n not in on_spine and _is_source(dag, n):
                    x += widths[layer[n]] - sizes[n].width  # a source waits beside its reader
            placed[n] = (x, tops[n] + shift)
        top += max(tops[n] + sizes[n].height for n in members) - min(tops.values()) + band_gap
    left = min(x for x, _ in placed.values())
    return {n: (placed[n][0] - left, placed[n][1]) for n in graph.nodes}


def _best_wrap(graph: Graph, sizes: Mapping[str, BlockSize]) -> dict[str, Position]:
    """The wrapped layout that shows largest in ``LAPTOP_BOX``: bands of the wrap width, or
    wider ones when narrow bands stack taller than the box; when none shows whole, the
    sublayers in line (``chain``), a row per band (a layer of four sublayers, a decoder),
    then rows and bands closer (an encoder over a decoder)."""
    best, best_scale = None, -1.0
    grids: dict[bool, _Grid] = {}  # the columns and rows of each spine, cut into bands below
    for chain, gap_y, band_gap in WRAP_TRIES:
        if chain not in grids:
            grids[chain] = _grid(graph, chain, wrapped=True)
        grid = grids[chain]
        for wrap, balance in itertools.product(
                (WRAP_WIDTH, WRAP_WIDTH * 1.25, WRAP_WIDTH * 1.5, WRAP_WIDTH * 2), (False, True)):
            # even bands where they show larger (a level that fits keeps its filled bands:
            # a block spliced in line stays on its row)
            placed = _banded(graph, sizes, grid, GAP_X, gap_y, wrap, band_gap, balance)
            scale = _laptop_scale(*_placed_extent(placed, sizes))
            if scale > best_scale + 0.01:
                best, best_scale = placed, scale
        if best_scale >= 1.0:
            break
    return best


def _is_source(dag: nx.DiGraph, n: str) -> bool:
    return not any(True for _ in dag.predecessors(n))


def _bands(widths: list[float], gap: float, wrap: float | None,
           balance: bool = False) -> list[list[int]]:
    """Consecutive layers grouped so that each group is at most ``wrap`` wide (a layer wider
    than that has a band to itself); with ``balance``, as many bands as that takes, each as
    narrow as they can all be."""
    bands = _filled_bands(widths, gap, wrap)
    if not balance or wrap is None or len(bands) < 2:
        return bands
    # the narrowest width that needs no more bands: every span of consecutive layers is a
    # candidate, and the first that keeps the count spreads the layers evenly
    spans = sorted({sum(widths[i:j]) + gap * (j - i - 1)
                    for i in range(len(widths)) for j in range(i + 1, len(widths) + 1)})
    for width in (w for w in spans if w <= wrap):
        even = _filled_bands(widths, gap, width)
        if len(even) <= len(bands):
            return even
    return bands


def _filled_bands(widths: list[float], gap: float, wrap: float | None) -> list[list[int]]:
    """Each band filled to ``wrap`` before the next one starts (as text wraps)."""
    bands: list[list[int]] = [[]]
    used = 0.0
    for k, w in enumerate(widths):
        if bands[-1] and wrap is not None and used + gap + w > wrap:
            bands.append([])
            used = 0.0
        used += (gap if bands[-1] else 0.0) + w
        bands[-1].append(k)
    return bands


def _offsets(widths: list[float], gap: float) -> list[float]:
    out, x = [], 0.0
    for w in widths:
        out.append(x)
        x += w + gap
    return out


def _row_lines(sizes: Mapping[str, BlockSize], row: Mapping[str, int],
               gap: float) -> dict[int, float]:
    """The height of each row's alignment line, rows stacked without touching."""
    above: dict[int, float] = {}
    below: dict[int, float] = {}
    for n, r in row.items():
        above[r] = max(above.get(r, 0.0), sizes[n].anchor)
        below[r] = max(below.get(r, 0.0), sizes[n].height - sizes[n].anchor)
    line = {0: 0.0}
    rows = sorted(above)
    for r in (r for r in rows if r > 0):
        prev = max(q for q in line if q < r)
        line[r] = line[prev] + below.get(prev, 0.0) + gap + above[r]
    for r in (r for r in reversed(rows) if r < 0):
        nxt = min(q for q in line if q > r)
        line[r] = line[nxt] - above.get(nxt, 0.0) - gap - below[r]
    return line


# ----------------------------------------------------------------- what the editor asks
def block_rect(graph: Graph, node_id: str) -> tuple[float, float, float, float]:
    """A block's drawn rectangle (x, y, width, height) in canvas units."""
    node, size = graph.node(node_id), block_size(graph, node_id)
    return (node.pos[0] * CANVAS_SCALE, node.pos[1] * CANVAS_SCALE, size.width, size.height)


def block_rects(graph: Graph) -> dict[str, tuple[float, float, float, float]]:
    """Each block's drawn rectangle (x, y, width, height) in canvas units."""
    return {nid: block_rect(graph, nid) for nid in graph.nodes}


def rects_meet(a, b, margin: float = 0.0, margin_y: float | None = None) -> bool:
    """Whether rectangles ``a`` and ``b`` (x, y, width, height) overlap, or come closer than
    ``margin`` across (``margin_y`` up and down; default the same)."""
    my = margin if margin_y is None else margin_y
    return (a[0] < b[0] + b[2] + margin and b[0] < a[0] + a[2] + margin
            and a[1] < b[1] + b[3] + my and b[1] < a[1] + a[3] + my)


def overlapping_pairs(graph: Graph, margin: float = 0.0) -> list[tuple[str, str]]:
    """Pairs of blocks whose drawn rectangles intersect (closer than ``margin``)."""
    return _overlapping(block_rects(graph), margin)


def _overlapping(rects: Mapping[str, Rect], margin: float) -> list[tuple[str, str]]:
    items = list(rects.items())
    return [(a, b) for i, (a, ra) in enumerate(items) for b, rb in items[i + 1:]
            if rects_meet(ra, rb, margin)]


def tidy_positions(graph: Graph) -> dict[str, Position]:
    """New graph positions for every block: laid out in layers, wrapped into bands no wider
    than a laptop's canvas at a legible zoom (a layer's inside too, entered: its eight blocks
    in a row were twice that), the whole kept where the graph's top-left corner was."""
    if not graph.nodes:
        return {}
    sizes = {nid: block_size(graph, nid) for nid in graph.nodes}
    placed = _best_wrap(graph, sizes)
    x0 = min(n.pos[0] for n in graph.nodes.values())
    y0 = min(n.pos[1] for n in graph.nodes.values())
    return {nid: (round(x0 + x / CANVAS_SCALE, 2), round(y0 + y / CANVAS_SCALE, 2))
            for nid, (x, y) in placed.items()}


def room_for(graph: Graph, piece: Graph, offset: Position) -> Position:
    """An offset at or below ``offset`` where ``piece`` (blocks being pasted, positioned as in
    their own graph) overlaps none of ``graph``'s blocks."""
    rects = list(block_rects(graph).values())
    own = block_rects(piece)
    dx, dy = offset
    step = GAP_Y / CANVAS_SCALE
    for _ in range(1000):
        moved = [(x + dx * CANVAS_SCALE, y + dy * CANVAS_SCALE, w, h)
                 for x, y, w, h in own.values()]
        if not any(rects_meet(m, r, WIRE_ROOM) for m in moved for r in rects):
            return (dx, dy)
        dy += step
    return (dx, dy)


def nearest_room(graph: Graph, piece: Graph, offset: Position,
                 margin: float = WIRE_ROOM, grid: float | None = None) -> Position:
    """The offset nearest ``offset`` where ``piece`` (blocks being moved, positioned as in
    their own graph) overlaps none of ``graph``'s blocks, as node editors snap a dropped
    block clear: where it is when that is free, else against the side of a block in the way
    (left, right, above or below it), else below everything in the way (``room_for``);
    ``margin`` apart from the others at least; with ``grid`` (canvas units), the piece's
    corner on the grid, as a snapped drag puts it."""
    rects = list(block_rects(graph).values())
    own = list(block_rects(piece).values())
    if not own:
        return offset

    def free(dx: float, dy: float) -> bool:
        moved = [(x + dx * CANVAS_SCALE, y + dy * CANVAS_SCALE, w, h) for x, y, w, h in own]
        return not any(rects_meet(m, r, margin) for m in moved for r in rects)

    dx, dy = offset
    if free(dx, dy):
        return offset
    left = min(x for x, _, _, _ in own) / CANVAS_SCALE
    top = min(y for _, y, _, _ in own) / CANVAS_SCALE
    width = (max(x + w for x, _, w, _ in own) / CANVAS_SCALE) - left
    height = (max(y + h for _, y, _, h in own) / CANVAS_SCALE) - top
    room = (margin + 1) / CANVAS_SCALE
    candidates = []
    for x, y, w, h in rects:
        x, y, w, h = (v / CANVAS_SCALE for v in (x, y, w, h))
        candidates += [(x - room - width - left, dy), (x + w + room - left, dy),
                       (dx, y - room - height - top), (dx, y + h + room - top)]
    if grid:
        def on_grid(value: float, corner: float, up: bool) -> float:
            at = (corner + value) * CANVAS_SCALE / grid
            return (math.ceil(at) if up else math.floor(at)) * grid / CANVAS_SCALE - corner
        candidates = [(on_grid(cx, left, cx > dx), on_grid(cy, top, cy > dy)) if (cx, cy) != (
            dx, dy) else (cx, cy) for cx, cy in candidates]
    candidates.sort(key=lambda c: (c[0] - dx) ** 2 + (c[1] - dy) ** 2)
    return next((c for c in candidates if free(*c)), None) or room_for(graph, piece, offset)


def clear_spot(graph: Graph, node: Node, near: Position) -> Position:
    """The position nearest ``near`` where ``node`` (not yet in ``graph``) overlaps no block
    of ``graph``: where a new block goes, so that none sits on another and the others stay
    where they are (a splice lands beside the wire it went into, not below everything)."""
    piece = Graph()
    piece.nodes[node.id] = Node(node.id, node.type, dict(node.params), (0.0, 0.0), node.title,
                                node.subgraph)
    others = Graph(nodes={k: v for k, v in graph.nodes.items() if k != node.id},
                   edges=[], meta=graph.meta)
    # a layer's gap apart: room for the wires into it and their shape labels
    return nearest_room(others, piece, near, margin=GAP_X)


def is_tidy(graph: Graph, near: float = 0.5) -> bool:
    """Whether every block of ``graph`` is where the tidy layout puts it (a preset as
    opened, a level after a tidy or an in-line splice)."""
    tidy = tidy_positions(graph)
    return all(abs(tidy[n][0] - node.pos[0]) <= near and abs(tidy[n][1] - node.pos[1]) <= near
               for n, node in graph.nodes.items())


def in_line(before: Graph, after: Graph, node_id: str, edge: Edge) -> dict[str, Position] | None:
    """Positions that put ``node_id``, spliced into the wire ``edge`` (``after`` is ``before``
    with the splice made), in line on that wire: the blocks downstream shift along to make
    room and every other block keeps its place in the reading order. A tidy level is laid out
    afresh (its bands wrap again); a level arranged by hand has the wire's reader and the
    blocks right of it on its row shifted right by the new block's width and a gap. None when
    that would make blocks overlap (the caller then puts the block beside the wire)."""
    if edge.dst not in before or node_id not in after:
        return None
    if is_tidy(before):
        return tidy_positions(after)
    rects = block_rects(before)
    x, y, _, h = rects[edge.dst]
    size = block_size(after, node_id)
    shift = (size.width + GAP_X) / CANVAS_SCALE
    anchor = block_size(before, edge.dst).anchor
    out = {n: pos for n, pos in ((k, v.pos) for k, v in after.nodes.items())}
    for n, (bx, by, _, bh) in rects.items():
        if bx >= x - 1.0 and by < y + h and y < by + bh:  # the reader and the rest of its row
            out[n] = (round(out[n][0] + shift, 2), out[n][1])
    out[node_id] = (round(x / CANVAS_SCALE, 2), round((y + anchor - size.anchor) / CANVAS_SCALE, 2))
    placed = after.clone()
    for n, pos in out.items():
        placed.nodes[n].pos = pos
    return out if not overlapping_pairs(placed, WIRE_ROOM) else None


def _extent(rects) -> tuple[float, float]:
    rects = list(rects)
    return (max(x + w for x, _, w, _ in rects) - min(x for x, _, _, _ in rects),
            max(y + h for _, y, _, h in rects) - min(y for _, y, _, _ in rects))


def _placed_extent(placed: Mapping[str, Position],
                   sizes: Mapping[str, BlockSize]) -> tuple[float, float]:
    return _extent((x, y, sizes[n].width, sizes[n].height) for n, (x, y) in placed.items())


def _laptop_scale(width: float, height: float) -> float:
    """How large a picture of ``width`` x ``height`` shows in ``LAPTOP_BOX`` (1: whole)."""
    return min(1.0, LAPTOP_BOX[0] / width, LAPTOP_BOX[1] / height)


def too_wide(graph: Graph) -> bool:
    """Whether a laptop shows the level only in part at a legible zoom (it runs past
    ``LAPTOP_BOX``) while the tidy layout would show more of it."""
    rects = block_rects(graph)
    if not rects:
        return False
    now = _laptop_scale(*_extent(rects.values()))
    if now >= 1.0:
        return False
    sizes = {nid: block_size(graph, nid) for nid in graph.nodes}
    tidy = _best_wrap(graph, sizes)
    then = _laptop_scale(*_placed_extent(tidy, sizes))
    return then > now + 0.01


def needs_tidy(graph: Graph) -> bool:
    """Whether blocks overlap, or sit closer than a wire needs to reach a port between them
    (a group made from a block is wider than the block: it can end up a few units from its
    neighbour's input)."""
    return bool(overlapping_pairs(graph, WIRE_ROOM))


def needs_tidy_around(graph: Graph, group_id: str, was: Rect) -> bool:
    """Whether an edit inside ``group_id``, whose open frame was drawn at ``was``, left its
    level needing a tidy: blocks overlap or sit closer than a wire needs (``needs_tidy``), or
    the frame grew to sit side by side (heights within WIRE_ROOM) closer than a layer's gap
    to a block it was not that close to. GAP_X is the room a wire between them needs for its
    shape label, which the tidy layout and a block placed by the editor (``clear_spot``)
    leave; less a unit, as positions are rounded to 0.01 (a tidy gap of 80 is 79.996). A
    block the user left that close by hand does not count."""
    rects = block_rects(graph)
    if _overlapping(rects, WIRE_ROOM):
        return True
    now, gap = rects[group_id], GAP_X - 1.0
    return any(rects_meet(now, r, gap, WIRE_ROOM) and not rects_meet(was, r, gap, WIRE_ROOM)
               for nid, r in rects.items() if nid != group_id)


def levels_near(root: Graph, path: Iterable[str]) -> list[tuple[str, ...]]:
    """The level at ``path``, the groups directly inside it and its ancestors, deepest
    first: the levels whose drawing a rewrite at ``path`` can change (an open group's frame
    grows with its inside)."""
    path = tuple(path)
    here = graph_at(root, path)
    inside = [path + (n.id,) for n in here.nodes.values() if n.is_group and n.subgraph]
    return inside + [path[:k] for k in range(len(path), -1, -1)]



# ----------------------------------------------------------------- wires around blocks
Rect = tuple[float, float, float, float]  # x, y, width, height


def bezier_points(start: Position, end: Position, samples: int = 32) -> list[Position]:
    """Points along the canvas's wire curve (horizontal tangents at both ends)."""
    dx = max(abs(end[0] - start[0]) * 0.5, 50.0)
    c1, c2 = (start[0] + dx, start[1]), (end[0] - dx, end[1])
    return [(a * start[0] + b * c1[0] + c * c2[0] + d * end[0],
             a * start[1] + b * c1[1] + c * c2[1] + d * end[1])
            for a, b, c, d in _bezier_weights(samples)]


_BEZIER_WEIGHTS: dict[int, list[tuple[float, float, float, float]]] = {}


def _bezier_weights(samples: int) -> list[tuple[float, float, float, float]]:
    """Each sample's weights of the curve's four points (the same for every wire)."""
    if samples not in _BEZIER_WEIGHTS:
        _BEZIER_WEIGHTS[samples] = [
            ((1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t ** 2, t ** 3)
            for t in (i / samples for i in range(samples + 1))]
    return _BEZIER_WEIGHTS[samples]


def _inside(p: Position, r: Rect, pad: float) -> bool:
    return r[0] - pad < p[0] < r[0] + r[2] + pad and r[1] - pad < p[1] < r[1] + r[3] + pad


# a routed wire's straight run: (axis, at, from, to): axis 0 a horizontal run at height
# ``at`` from x to x, axis 1 a vertical leg at x ``at`` from y to y
Lane = tuple[int, float, float, float]
LANE_GAP = 20.0   # between parallel runs: a shape label (about 14 high) fits between them
BESIDE_GAP = 6.0  # the least: two runs the eye still tells apart (where LANE_GAP leaves no way)
# how far out of its port a routed wire turns, nearest first (at the canvas's clearance of
# 12; scaled with the clearance, so half inside a frame)
LEADS = (24.0, 48.0, 72.0)


def wire_route(start: Position, end: Position, obstacles: Iterable[Rect],
               clearance: float = 12.0, ends: Iterable[Rect] = (),
               lanes: Iterable[Lane] = ()) -> list[Position] | None:
    """Corner points for a wire that would cross a block (or its ports) on its way, or that
    runs backwards or too short for its curve (to a band below, in a wrapped layout; between
    close neighbours, where the curve would overshoot): out of its port, down or up a leg
    clear of every block, along the nearest free channel above, below or between the blocks
    (``ends``, the blocks it joins, count too), and a clear leg into the other port. Its runs
    and legs keep LANE_GAP from other wires' (``lanes``) that overlap them, so parallel wires
    and their labels do not stack on one line. None when the plain curve is clear."""
    blocks = list(obstacles)
    walls = blocks + list(ends)
    lanes = list(lanes)
    backwards = end[0] - start[0] < 2 * LEADS[0]
    if not backwards:
        curve = bezier_points(start, end)
        near = _near_box(blocks, curve, clearance)  # a big graph: test only what is close
        if not any(_inside(p, r, clearance / 2) for p in curve[1:-1] for r in near):
            return None
    first = None
    legs = [lane for lane in lanes if lane[0] == 1]
    leads = [lead * clearance / 12.0 for lead in LEADS]  # inside a frame (6): 12, 24, 36
    for lead_a, lead_b in sorted(((a, b) for a in leads for b in leads),
                                 key=lambda ab: (ab[0] + ab[1], ab[0])):
        a, b = start[0] + lead_a, end[0] - lead_b
        lo, hi = min(a, b) - clearance, max(a, b) + clearance
        between = sorted((r for r in walls if r[0] < hi and r[0] + r[2] > lo),
                         key=lambda r: r[1])
        if not between:
            return None
        busy = [lane for lane in lanes if lane[0] == 0 and lane[2] < hi and lane[3] > lo]
        for y in _channels(between, (start[1] + end[1]) / 2, clearance, busy):
            route = [start, (a, start[1]), (a, y), (b, y), (b, end[1]), end]
            if first is None:
                first = route
            if _crosses(route, walls, clearance / 2):
                continue
            if _on_busy_leg(a, start[1], y, legs) or _on_busy_leg(b, y, end[1], legs):
                continue
            return route
    # no single channel: find the way around (a block between the ends' rows, say), off the
    # other wires' runs if it can be: LANE_GAP off, else at least beside them (a narrow pass
    # between blocks may hold another wire's leg), else anyhow
    return (_maze_route(start, end, walls, clearance, leads[0], lanes)
            or _maze_route(start, end, walls, clearance, leads[0], lanes, gap=BESIDE_GAP)
            or _maze_route(start, end, walls, clearance, leads[0]) or first)


def _on_busy_leg(x: float, y0: float, y1: float, legs: list[Lane]) -> bool:
    """Whether a vertical leg at ``x`` from ``y0`` to ``y1`` would run along another wire's
    leg (closer than LANE_GAP, their heights overlapping)."""
    low, high = min(y0, y1), max(y0, y1)
    return any(abs(x - leg[1]) < LANE_GAP and leg[2] < high and leg[3] > low for leg in legs)


def route_lanes(route: list[Position] | None, start: Position | None = None,
                end: Position | None = None) -> list[Lane]:
    """The straight runs of a route from :func:`wire_route` (its stubs out of and into the
    ports excepted): horizontal runs and vertical legs. A plain curve (no route) has none,
    unless its ``start`` and ``end`` are given at one height: the curve is then a level line,
    and a later wire's run along it would hide it as another run would."""
    if not route:
        if start is not None and end is not None and abs(start[1] - end[1]) < 0.5:
            return [(0, start[1], min(start[0], end[0]), max(start[0], end[0]))]
        return []
    out: list[Lane] = []
    for (x0, y0), (x1, y1) in zip(route[1:-2], route[2:-1]):
        if y0 == y1 and x0 != x1:
            out.append((0, y0, min(x0, x1), max(x0, x1)))
        elif x0 == x1 and y0 != y1:
            out.append((1, x0, min(y0, y1), max(y0, y1)))
    return out


def _maze_route(start: Position, end: Position, blocks: list[Rect], clearance: float,
                lead: float, lanes: Iterable[Lane] = (), gap: float = LANE_GAP
                ) -> list[Position] | None:
    """The shortest orthogonal way from ``start`` to ``end`` around ``blocks`` (bends cost
    extra), along lines ``clearance`` off the blocks' edges and ``gap`` off other wires'
    runs (``lanes``, never run along, crossing them is fine): Dijkstra on the grid those
    lines make. None when there is none."""
    lanes = list(lanes)
    a, b = (start[0] + lead, start[1]), (end[0] - lead, end[1])
    xs = sorted({a[0], b[0], *(v for r in blocks for v in (r[0] - clearance,
                                                           r[0] + r[2] + clearance)),
                 *(lane[1] + s * gap for lane in lanes if lane[0] == 1 for s in (-1, 1))})
    ys = sorted({a[1], b[1], *(v for r in blocks for v in (r[1] - clearance,
                                                           r[1] + r[3] + clearance)),
                 *(lane[1] + s * gap for lane in lanes if lane[0] == 0 for s in (-1, 1))})
    pad = clearance / 2
    # each block's inside, ``pad`` in from its edges (as _crosses reads it), and the lanes
    # of each axis; a step runs along one grid line, so what it can meet is found once per
    # line (the blocks the line passes through, the lanes closer than ``gap`` to it), and
    # each step is checked once, from whichever end it is taken
    insides = [(r[0] + pad, r[0] + r[2] - pad, r[1] + pad, r[1] + r[3] - pad) for r in blocks]
    lanes_of = ([lane for lane in lanes if lane[0] == 0], [lane for lane in lanes if lane[0] == 1])
    on_line: dict[tuple[int, int], tuple[list[tuple[float, float]], list[Lane]]] = {}
    checked: dict[tuple[int, int, int, int], bool] = {}

    def near(axis: int, k: int) -> tuple[list[tuple[float, float]], list[Lane]]:
        """What a step along row ``k`` (axis 0) or column ``k`` (axis 1) can meet: the
        spans of the blocks across it, and the lanes beside it."""
        if (axis, k) not in on_line:
            at = ys[k] if axis == 0 else xs[k]
            spans = [(left, right) if axis == 0 else (top, bottom)
                     for left, right, top, bottom in insides
                     if (top < at < bottom if axis == 0 else left < at < right)]
            beside = [lane for lane in lanes_of[axis] if abs(lane[1] - at) < gap - 0.5]
            on_line[axis, k] = spans, beside
        return on_line[axis, k]

    def clear(i: int, j: int, ni: int, nj: int) -> bool:
        key = (i, j, ni, nj) if (i, j) < (ni, nj) else (ni, nj, i, j)
        known = checked.get(key)
        if known is None:
            if j == nj:  # along row j
                (spans, beside), lo, hi = near(0, j), min(xs[i], xs[ni]), max(xs[i], xs[ni])
            else:  # along column i
                (spans, beside), lo, hi = near(1, i), min(ys[j], ys[nj]), max(ys[j], ys[nj])
            known = checked[key] = (
                not any(lo < end and hi > begin for begin, end in spans)
                and not any(lane[2] < hi and lane[3] > lo for lane in beside))
        return known

    goal = (xs.index(b[0]), ys.index(b[1]))
    first = (xs.index(a[0]), ys.index(a[1]), 0)  # 0: moving horizontally, 1: vertically
    bend = 2 * clearance + 40.0
    best = {first: 0.0}
    came: dict = {}
    queue = [(0.0, first)]
    while queue:
        cost, state = heapq.heappop(queue)
        i, j, d = state
        if (i, j) == goal and d == 0:
            points = [(xs[goal[0]], ys[goal[1]])]
            while state in came:
                state = came[state]
                points.append((xs[state[0]], ys[state[1]]))
            corners = _corners([start] + points[::-1] + [end])
            return corners
        if cost > best.get(state, 1e18):
            continue
        for di, dj, nd in ((1, 0, 0), (-1, 0, 0), (0, 1, 1), (0, -1, 1)):
            ni, nj = i + di, j + dj
            if not (0 <= ni < len(xs) and 0 <= nj < len(ys)):
                continue
            if not clear(i, j, ni, nj):
                continue
            p, q = (xs[i], ys[j]), (xs[ni], ys[nj])
            step = abs(q[0] - p[0]) + abs(q[1] - p[1]) + (bend if nd != d else 0.0)
            nxt = (ni, nj, nd)
            if cost + step < best.get(nxt, 1e18):
                best[nxt] = cost + step
                came[nxt] = state
                heapq.heappush(queue, (cost + step, nxt))
    return None


def _corners(points: list[Position]) -> list[Position]:
    """``points`` without the ones in the middle of a straight run."""
    out = [points[0]]
    for p, q in zip(points[1:], points[2:]):
        prev = out[-1]
        if (prev[0] == p[0] == q[0]) or (prev[1] == p[1] == q[1]) or p == prev:
            continue
        out.append(p)
    out.append(points[-1])
    return out


def _crosses(route: list[Position], blocks: list[Rect], pad: float) -> bool:
    """Whether a segment of ``route`` (its first and last stubs excepted: they touch the
    ports) passes through a block."""
    for (x0, y0), (x1, y1) in zip(route[1:-2], route[2:-1]):
        for r in blocks:
            if (min(x0, x1) < r[0] + r[2] - pad and max(x0, x1) > r[0] + pad
                    and min(y0, y1) < r[1] + r[3] - pad and max(y0, y1) > r[1] + pad):
                return True
    return False


def _channels(between: list[Rect], middle: float, clearance: float,
              busy: list[Lane]) -> list[float]:
    """Free heights for a horizontal run across ``between`` (sorted by top), nearest
    ``middle`` first: above them, in the gaps between them, below them; each kept LANE_GAP
    from the runs in ``busy``."""
    spans = [(-1e9, between[0][1] - clearance)]
    bottom = between[0][1] + between[0][3]
    for r in between[1:]:
        if r[1] - bottom > 2 * clearance:
            spans.append((bottom + clearance, r[1] - clearance))
        bottom = max(bottom, r[1] + r[3])
    spans.append((bottom + clearance, 1e9))
    out = []
    for low, high in spans:
        y = min(max(middle, low), high)
        step = LANE_GAP if y < high else -LANE_GAP  # walk away from the span's near edge
        for _ in range(40):
            if not low <= y <= high:
                break
            if all(abs(y - lane[1]) >= LANE_GAP for lane in busy):
                out.append(y)
                break
            y += step
    return sorted(out, key=lambda y: abs(y - middle))


def _near_box(blocks: list[Rect], points: list[Position], pad: float) -> list[Rect]:
    x0, x1 = min(p[0] for p in points) - pad, max(p[0] for p in points) + pad
    y0, y1 = min(p[1] for p in points) - pad, max(p[1] for p in points) + pad
    return [r for r in blocks
            if r[0] < x1 and r[0] + r[2] > x0 and r[1] < y1 and r[1] + r[3] > y0]


def untangled(root: Graph) -> Graph:
    """``root`` with every level whose blocks would overlap as drawn (a file laid out for
    closed groups meets open frames), or that runs past the wrap width, laid out afresh;
    other levels keep their positions."""
    out = root.clone()
    levels = [()] + [path + (node.id,) for path, node in out.walk() if node.subgraph is not None]
    for path in sorted(levels, key=len, reverse=True):  # insides first: frames size by them
        graph = graph_at(out, path)
        if needs_tidy(graph) or too_wide(graph):
            for nid, pos in tidy_positions(graph).items():
                graph.nodes[nid].pos = pos
    return out


# ----------------------------------------------------------------- a level as drawn (for checks)
PORT_PAD = (10.0, 4.0)  # what wires keep clear of around a block: its ports stick out sideways


@dataclass(frozen=True)
class Drawing:
    """One level of a graph as the canvas draws it, in canvas units: each block's rectangle,
    each wire's path (corners of a routed wire, else points along its curve) and the box of
    its shape label."""

    blocks: dict[str, Rect]
    wires: dict[Edge, list[Position]]
    labels: dict[Edge, Rect]


def port_positions(graph: Graph, node_id: str) -> tuple[dict[str, Position], dict[str, Position]]:
    """Where ``node_id``'s input and output ports sit, in canvas units (the canvas places its
    port items the same way: rows of a closed block, a frame's stream heights)."""
    node = graph.node(node_id)
    x, y = node.pos[0] * CANVAS_SCALE, node.pos[1] * CANVAS_SCALE
    size = block_size(graph, node_id)
    try:
        ins, outs = graph.input_ports(node_id), graph.output_ports(node_id)
    except GraphError:
        return {}, {}
    if node.is_group and node.subgraph is not None and len(node.subgraph.nodes):  # open frame
        frame = group_frame(graph, node_id)
        in_ys, out_ys = frame.input_ys, frame.output_ys
    else:
        in_ys = [port_y(i) for i in range(len(ins))]
        out_ys = [port_y(i) for i in range(len(outs))]
    return ({p.name: (x, y + h) for p, h in zip(ins, in_ys)},
            {p.name: (x + size.width, y + h) for p, h in zip(outs, out_ys)})


def draw_level(graph: Graph, label_size: tuple[float, float] = (48.0, 14.0)) -> Drawing:
    """Route every wire of ``graph`` as the canvas does (in its order, each run kept off the
    runs before it) and place each label (``label_size``: a "B×T×64" at 100%) above the
    middle of its wire."""
    blocks = block_rects(graph)
    px, py = PORT_PAD
    padded = {n: (r[0] - px, r[1] - py, r[2] + 2 * px, r[3] + 2 * py) for n, r in blocks.items()}
    wires: dict[Edge, list[Position]] = {}
    labels: dict[Edge, Rect] = {}
    lanes: list[Lane] = []
    ports = {n: port_positions(graph, n) for n in graph.nodes}
    for e in graph.edges:
        start = ports.get(e.src, ({}, {}))[1].get(e.src_port)
        end = ports.get(e.dst, ({}, {}))[0].get(e.dst_port)
        if start is None or end is None:
            continue
        others = [r for n, r in padded.items() if n not in (e.src, e.dst)]
        route = wire_route(start, end, others, ends=[padded[e.src], padded[e.dst]], lanes=lanes)
        lanes.extend(route_lanes(route, start, end))
        wires[e] = route if route else bezier_points(start, end)
    placed = place_labels(wires, {e: label_size for e in wires}, blocks.values())
    labels = {e: box for e, (_, _, box) in placed.items()}
    return Drawing(blocks, wires, labels)


def place_labels(wires: Mapping[Edge, list[Position]],
                 sizes: Mapping[Edge, tuple[float, float]],
                 blocks: Iterable[Rect]) -> dict[Edge, tuple[float, str, Rect]]:
    """Where each wire's shape label goes: (how far along, which side of the wire, its box).
    The shortest wires first; each at the first of LABEL_PLACES clear of the labels placed
    before it and of every block (a label under a block or a frame is cut), over the fewest
    other wires (a label over a crossing wire reads as that wire's); failing that, beside
    the wire (LABEL_BESIDE); failing that, clear of the blocks; failing that, the middle.
    The canvas places its labels with this (``gui/scene_wires.py``) and the property test
    checks its result (``draw_level``)."""
    blocks = list(blocks)
    taken: list[Rect] = []
    out: dict[Edge, tuple[float, str, Rect]] = {}
    samples = {e: _sampled(points) for e, points in wires.items()}
    for e in sorted(wires, key=lambda e: wire_length(wires[e])):
        options = label_spots(wires[e], sizes[e])
        obstacles = blocks + taken
        clear = (o for o in options if not any(rects_meet(o[2], b) for b in obstacles))
        # the first crossing the fewest other wires (none, where it can)
        choice = _fewest_crossings(e, clear, samples)
        if choice is None:
            beside = label_spots(wires[e], sizes[e], LABEL_BESIDE)
            clear = (o for o in beside if not any(rects_meet(o[2], b) for b in obstacles))
            choice = _fewest_crossings(e, clear, samples)
        if choice is None:
            off_blocks = [o for o in options + beside
                          if not any(rects_meet(o[2], b) for b in blocks)]
            choice = (off_blocks or options)[0]
        out[e] = choice
        taken.append(choice[2])
    return out


def _fewest_crossings(edge: Edge, spots: Iterable[tuple[float, str, Rect]],
                      samples: Mapping[Edge, _Sampled]) -> tuple[float, str, Rect] | None:
    """The first of ``spots`` over the fewest other wires: ``min`` by that count, stopping
    at the first over none (most labels have one; counting the rest cost the drawing most
    of its time); None without a spot."""
    best, fewest = None, math.inf
    for spot in spots:
        crossing = len(_crossing_wires(edge, spot[2], samples))
        if crossing < fewest:
            best, fewest = spot, crossing
            if not crossing:
                break
    return best


def shared_runs(drawing: Drawing, near: float = 2.0,
                min_length: float = 8.0) -> list[tuple[Edge, Edge]]:
    """Pairs of wires (from different outputs into different inputs: a fork shares its
    start by design) with a straight run on one line, closer than ``near``, along more than
    ``min_length``: the eye cannot tell which way either goes. The stubs out of and into the
    ports are left out, as ``route_lanes`` leaves them out: each lies on its port's row."""
    edges = list(drawing.wires)
    runs = []  # (axis, at, from, to, which wire)
    for i, points in enumerate(drawing.wires.values()):
        inner = points[1:-1]
        for (x0, y0), (x1, y1) in zip(inner, inner[1:]):
            if y0 == y1 and x0 != x1:
                runs.append((0, y0, min(x0, x1), max(x0, x1), i))
            elif x0 == x1 and y0 != y1:
                runs.append((1, x0, min(y0, y1), max(y0, y1), i))
    # sorted by line, each run meets only the runs after it on a line closer than ``near``
    runs.sort()
    found = set()
    for k, (axis, at, lo, hi, i) in enumerate(runs):
        for other_axis, other_at, other_lo, other_hi, j in runs[k + 1:]:
            if other_axis != axis or other_at - at >= near:
                break
            if i != j and min(hi, other_hi) - max(lo, other_lo) > min_length:
                found.add((min(i, j), max(i, j)))
    pairs = []
    for i, j in sorted(found):
        a, b = edges[i], edges[j]
        if (a.src, a.src_port) != (b.src, b.src_port) and (a.dst, a.dst_port) != (
                b.dst, b.dst_port):
            pairs.append((a, b))
    return pairs


def label_spots(points: list[Position], size: tuple[float, float],
                places: Iterable[tuple[float, str]] | None = None) -> list[tuple[float, str, Rect]]:
    """The places a label of ``size`` may take on a wire, in the order tried: (how far
    along, which side, its box); of ``places`` (default LABEL_PLACES: the middle, else along
    or back, above, then below)."""
    lengths = _lengths(points)
    return [(at, side, label_box(_along(points, at, lengths), size, side))
            for at, side in (LABEL_PLACES if places is None else places)]


def label_box(point: Position, size: tuple[float, float], side: str) -> Rect:
    """A label's box of ``size`` on ``side`` of its wire's ``point``, 3 units off it: above or
    below it centred, or left or right of it level with it (the canvas draws it there)."""
    (x, y), (w, h) = point, size
    if side == BELOW:
        return (x - w / 2, y + 3, w, h)
    if side == RIGHT:
        return (x + 3, y - h / 2, w, h)
    if side == LEFT:
        return (x - w - 3, y - h / 2, w, h)
    return (x - w / 2, y - h - 3, w, h)


def _crossing_wires(edge: Edge, box: Rect, samples: Mapping[Edge, _Sampled]) -> list[Edge]:
    """The wires, other than ``edge`` and its forks (they carry its shape), that run through
    ``box`` (more than a unit inside it)."""
    inner = (box[0] + 1, box[1] + 1, box[2] - 2, box[3] - 2)
    return [o for o, sampled in samples.items()
            if (o.src, o.src_port) != (edge.src, edge.src_port) and sampled.enters(inner)]


def labels_on_wires(drawing: Drawing) -> list[tuple[Edge, Edge]]:
    """(labelled wire, other wire) for each shape label drawn over another wire's run."""
    samples = {e: _sampled(points) for e, points in drawing.wires.items()}
    return [(e, o) for e, box in drawing.labels.items()
            for o in _crossing_wires(e, box, samples)]


def labels_on_blocks(drawing: Drawing) -> list[tuple[Edge, str]]:
    """(wire, block) for each shape label drawn over a block (cut by it, or hiding it)."""
    return [(e, nid) for e, box in drawing.labels.items()
            for nid, r in drawing.blocks.items() if rects_meet(box, r)]


FrameWire = tuple[Edge, Position, Position, "list[Position] | None"]


def frame_wires(group: Node, frame: Frame) -> list[FrameWire]:
    """Each wire inside an open group's frame, in the frame's coordinates: (wire, start, end,
    route), a wire from or to the group's boundary starting or ending at the frame's own port
    on its edge, routed round the small blocks (route None: the plain curve). The canvas
    draws these; the property test checks them."""
    inside = group.subgraph if group.subgraph is not None else Graph()
    rects = {nid: (x, y, frame.inner_sizes[nid].width, frame.inner_sizes[nid].height)
             for nid, (x, y) in frame.inner.items()}
    minis = {nid: r for nid, r in rects.items()
             if inside.nodes[nid].type not in (GROUP_INPUT, GROUP_OUTPUT)}
    in_names, out_names = (_boundary_names(group, kind) for kind in (GROUP_INPUT, GROUP_OUTPUT))
    out: list[FrameWire] = []
    for e in inside.edges:
        if e.src not in rects or e.dst not in rects:
            continue
        a, b = rects[e.src], rects[e.dst]
        if inside.nodes[e.src].type == GROUP_INPUT:  # from the frame's port on its left edge
            start = (0.0, _height_of(in_names, frame.input_ys, e.src_port, a[1] + a[3] / 2))
        else:
            start = (a[0] + a[2], a[1] + a[3] / 2)
        if inside.nodes[e.dst].type == GROUP_OUTPUT:
            end = (frame.size.width,
                   _height_of(out_names, frame.output_ys, e.dst_port, b[1] + b[3] / 2))
        else:
            end = (b[0], b[1] + b[3] / 2)
        others = [r for nid, r in minis.items() if nid not in (e.src, e.dst)]
        out.append((e, start, end, wire_route(start, end, others, 6)))
    return out


def _boundary_names(group: Node, boundary_type: str) -> list[str]:
    inner = group_boundary(group, boundary_type)
    return [name for name, _ in parse_port_list(inner.typed_params().ports)] if inner else []


def _height_of(names: list[str], heights: list[float], name: str, fallback: float) -> float:
    index = names.index(name) if name in names else -1
    return heights[index] if 0 <= index < len(heights) else fallback


def draw_frame(graph: Graph, group_id: str) -> Drawing:
    """An open group's frame as the canvas draws it at ``graph``'s level, in canvas units:
    its small blocks (the boundary points left out) and the wires between them (no shape
    labels are drawn inside a frame)."""
    node = graph.node(group_id)
    frame = group_frame(graph, group_id)
    x0, y0 = node.pos[0] * CANVAS_SCALE, node.pos[1] * CANVAS_SCALE
    inside = node.subgraph if node.subgraph is not None else Graph()
    blocks = {nid: (x0 + x, y0 + y, frame.inner_sizes[nid].width, frame.inner_sizes[nid].height)
              for nid, (x, y) in frame.inner.items()
              if inside.nodes[nid].type not in (GROUP_INPUT, GROUP_OUTPUT)}
    wires = {e: [(x0 + x, y0 + y) for x, y in (route or bezier_points(start, end))]
             for e, start, end, route in frame_wires(node, frame)}
    return Drawing(blocks, wires, {})


# where along its wire a shape label goes: the middle unless another label is there. The
# shortest wires are labelled first: a long one has room further along (a wire passing down
# between two close blocks would otherwise take the short wire's only spot)
LABEL_SPOTS = (0.5, 0.35, 0.65, 0.2, 0.8, 0.1, 0.9)
# which side of its wire a label sits on
ABOVE, BELOW, LEFT, RIGHT = "above", "below", "left", "right"
# (where along, which side): above it first, then below (two short wires crossing between
# the same blocks have every spot above taken by the other's label)
LABEL_PLACES = (tuple((at, ABOVE) for at in LABEL_SPOTS)
                + tuple((at, BELOW) for at in LABEL_SPOTS))
# tried only where none of LABEL_PLACES is clear: beside the wire, level with it. Blocks
# dragged closer than a layer's gap (the canvas keeps WIRE_ROOM, 28) leave the run between
# them too little room for a label over or under it (a 32-unit gap has 16 each side of the
# run; a label takes 17), while the leg out of or into a port has an open side. The label
# moves along its wire, not the blocks: the drop stays where the user put it, and a level
# nobody dragged (every preset) keeps its labels where they were.
LABEL_BESIDE = (tuple((at, RIGHT) for at in LABEL_SPOTS)
                + tuple((at, LEFT) for at in LABEL_SPOTS))


def wire_length(points: list[Position]) -> float:
    return sum(((b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2) ** 0.5
               for a, b in zip(points, points[1:]))


def _lengths(points: list[Position]) -> list[float]:
    """The length of each of a polyline's segments."""
    return [((b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2) ** 0.5 for a, b in zip(points, points[1:])]


def _along(points: list[Position], fraction: float,
           lengths: list[float] | None = None) -> Position:
    """The point ``fraction`` of the length along a polyline (``lengths``: its segments',
    where the caller asks for several points)."""
    lengths = _lengths(points) if lengths is None else lengths
    left = sum(lengths) * fraction
    for (a, b), length in zip(zip(points, points[1:]), lengths):
        if left <= length and length > 0:
            k = left / length
            return (a[0] + (b[0] - a[0]) * k, a[1] + (b[1] - a[1]) * k)
        left -= length
    return points[-1]


def wires_through_blocks(drawing: Drawing, pad: float = 6.0) -> list[tuple[Edge, str]]:
    """(wire, block) for each wire that passes through a block other than the two it joins
    (more than ``pad`` inside it; sampled every few units)."""
    hits = []
    for e, points in drawing.wires.items():
        sampled = _sampled(points)
        for nid, r in drawing.blocks.items():
            if nid in (e.src, e.dst):
                continue
            if sampled.enters((r[0] + pad, r[1] + pad, r[2] - 2 * pad, r[3] - 2 * pad)):
                hits.append((e, nid))
    return hits


class _Sampled(NamedTuple):
    """A wire's points every few units and their bounds (x0, y0, x1, y1): a box the bounds
    miss holds none of the points, so most wires are ruled out without reading them."""
    points: list[Position]
    bounds: tuple[float, float, float, float]

    def enters(self, box: Rect) -> bool:
        """Whether a point lies inside ``box`` (not on its edge)."""
        x0, y0, x1, y1 = self.bounds
        left, top, right, bottom = box[0], box[1], box[0] + box[2], box[1] + box[3]
        return (x1 > left and x0 < right and y1 > top and y0 < bottom
                and any(left < x < right and top < y < bottom for x, y in self.points))


# the wires sampled lately, by their points: placing the labels and each check of a
# drawing (wires through blocks, labels on wires) sample the same wires again
_SAMPLED: dict[tuple, _Sampled] = {}
_SAMPLED_KEPT = 4096


def _sampled(points: list[Position], step: float = 4.0) -> _Sampled:
    """``points`` every ``step`` units or closer (shared: read it, never change it)."""
    key = (step, *points)
    sampled = _SAMPLED.get(key)
    if sampled is None:
        samples = _samples(points, step)
        xs, ys = [p[0] for p in samples], [p[1] for p in samples]
        sampled = _Sampled(samples, (min(xs), min(ys), max(xs), max(ys)))
        _keep(_SAMPLED, key, sampled, _SAMPLED_KEPT)
    return sampled


def _samples(points: list[Position], step: float) -> list[Position]:
    out = [points[0]]
    for a, b in zip(points, points[1:]):
        (ax, ay), dx, dy = a, b[0] - a[0], b[1] - a[1]
        n = max(1, int((dx ** 2 + dy ** 2) ** 0.5 / step))
        out.extend((ax + dx * i / n, ay + dy * i / n) for i in range(1, n + 1))
    return out


def overlapping_labels(drawing: Drawing) -> list[tuple[Edge, Edge]]:
    items = list(drawing.labels.items())
    return [(a, b) for i, (a, ra) in enumerate(items) for b, rb in items[i + 1:]
            if rects_meet(ra, rb)]
