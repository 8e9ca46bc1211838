"""Edit rules: what one user gesture does to the graph, decided here once and returned as an
undoable :class:`Edit` with the sentence that tells the user what happened.

The inspector, the experiments' variants and the command line ask these functions and execute
what they return, so a rule (a head change keeping the attention's kind, say) has one home and
can be tested without a widget.

A head count that cannot be grouped (a prime: 5, 7) turns grouped-query attention into MQA.
The level remembers the group size the user had (``graph.meta["kv_groups"]``, by node id), so
that a later count that can be grouped again gets GQA back, at the group size nearest the one
chosen. Setting the K/V heads by hand is the user choosing a kind: it forgets that memory.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable

from . import block_types as bt
from . import layout
from .edits import (Connect, Disconnect, Document, Edit, Macro, MoveNodes, Path, SetParam,
                    connection_problem)
from .insert import splice_edit
from .model import Edge, Graph, GraphError, Node, graph_at
from .switches import KV_GROUPS, attention_kind_of, gqa_choices, kv_heads_for
_ATTENTION_TYPES = (bt.ATTENTION, bt.CROSS_ATTENTION)


@dataclass(frozen=True)
class RuledEdit:
    """The edit a rule decided on, and what to tell the user ("" when it is only the edit)."""

    edit: Edit
    message: str = ""


@dataclass
class SetMeta(Edit):
    """Set (or, with ``value`` None, remove) one entry of ``graph.meta`` at ``path``."""

    path: Path
    key: str
    value: Any
    text: str = "Set a graph fact"
    changes_model = False  # the compiler never reads these facts
    _old: Any = None
    _had: bool = False

    def do(self, doc):
        meta = doc.graph(self.path).meta
        self._had, self._old = self.key in meta, meta.get(self.key)
        if self.value is None:
            meta.pop(self.key, None)
        else:
            meta[self.key] = self.value

    def undo(self, doc):
        meta = doc.graph(self.path).meta
        if self._had:
            meta[self.key] = self._old
        else:
            meta.pop(self.key, None)


def remembered_group(graph: Graph, node_id: str) -> int | None:
    """The heads per K/V head the user chose for ``node_id`` before a head count that could
    not be grouped took its GQA away (None when nothing is remembered)."""
    value = (graph.meta.get(KV_GROUPS) or {}).get(node_id)
    return int(value) if isinstance(value, int) and value > 1 else None


def _regrouped(new_heads: int, group: int) -> int | None:
    """K/V heads that make ``new_heads`` GQA at the group size nearest ``group`` (None when
    ``new_heads`` cannot be grouped)."""
    choices = gqa_choices(new_heads)
    if not choices:
        return None
    return min(choices, key=lambda kv: (abs(new_heads // kv - group), kv))


def _remember(path: Path, graph: Graph, node_id: str, group: int | None) -> Edit | None:
    groups = dict(graph.meta.get(KV_GROUPS) or {})
    if group is None and node_id not in groups:
        return None
    if group is None:
        groups.pop(node_id)
    else:
        groups[node_id] = group
    return SetMeta(path, KV_GROUPS, groups or None)


def set_param_edit(graph: Graph, path: Path, node_id: str, name: str, value: Any) -> RuledEdit:
    """What setting ``name`` to ``value`` on ``node_id`` (in ``graph``, the level at
    ``path``) does: heads on an attention keep its kind (see :func:`heads_edit`); K/V heads set
    by hand forget a remembered grouping; anything else is that one parameter."""
    node = graph.node(node_id)
    if node.type in _ATTENTION_TYPES and name == "heads":
        try:
            return heads_edit(graph, path, node_id, int(value))
        except (TypeError, ValueError):
            pass  # not a whole number: SetParam refuses it with the parameter's own sentence
    edit: Edit = SetParam(path, node_id, name, value, text=f"Set {name}")
    forget = _remember(path, graph, node_id, None) if name == "kv_heads" else None
    if forget is not None:
        edit = Macro([edit, forget], text=f"Set {name}")
    return RuledEdit(edit)


def heads_edit(graph: Graph, path: Path, node_id: str, new_heads: int) -> RuledEdit:
    """Set an attention's heads keeping the kind the user chose: MHA stays MHA, MQA stays MQA,
    GQA keeps its group size where it divides, else the nearest grouping. A count that cannot
    be grouped makes GQA into MQA and the level remembers the group size; a later count that
    can be grouped restores GQA. The message says each change of kind and why."""
    node = graph.node(node_id)
    attn = node.typed_params()
    heads, kv = int(attn.heads), int(attn.kv_heads)
    kind = attention_kind_of(heads, kv)
    remembered = remembered_group(graph, node_id)
    restored = _regrouped(new_heads, remembered) if remembered and kind == "mqa" else None
    if restored is not None:
        new_kv = restored
    else:
        new_kv = kv_heads_for(heads, kv, new_heads) if new_heads > 0 else kv
    new_kind = attention_kind_of(new_heads, new_kv)
    text = f"Set heads to {new_heads}"
    commands: list[Edit] = []
    if new_kv != kv:
        commands.append(SetParam(path, node_id, "kv_heads", new_kv))
    commands.append(SetParam(path, node_id, "heads", new_heads, text=text))
    memory: Edit | None = None
    message = ""
    if kind == "gqa" and new_kind != "gqa":
        memory = _remember(path, graph, node_id, heads // kv)
        message = (f"K/V heads {kv} → {new_kv}: {new_heads} heads cannot be grouped, so "
                   f"{kind.upper()} became {new_kind.upper()}; choose heads with a divisor "
                   "between 1 and heads for GQA (it comes back when they can be grouped)")
    elif restored is not None:
        memory = _remember(path, graph, node_id, None)
        message = (f"K/V heads {kv} → {new_kv}: {new_heads} heads can be grouped again, so "
                   f"MQA became GQA again ({new_heads // new_kv} heads per K/V head)")
    elif new_kv != kv or kind != new_kind:
        message = f"K/V heads {kv} → {new_kv}" + (
            f" (still {new_kind.upper()})" if kind == new_kind else
            f": {kind.upper()} became {new_kind.upper()}")
    if memory is not None:
        commands.append(memory)
    edit = commands[0] if len(commands) == 1 else Macro(commands, text=text)
    return RuledEdit(edit, message)


def fix_edit(root: Graph, diagnostic) -> RuledEdit | None:
    """The edit that applies a problem's one obvious fix (``Diagnostic.fix``), through the
    same rules as an edit by hand (new heads keep the attention's kind); None when the
    problem has no single fix or its block is gone."""
    if diagnostic.fix is None or diagnostic.node_id is None:
        return None
    path = tuple(diagnostic.path or ())
    try:
        graph = graph_at(root, path)
    except GraphError:
        return None
    if diagnostic.node_id not in graph:
        return None
    name, value = diagnostic.fix
    ruled = set_param_edit(graph, path, diagnostic.node_id, name, value)
    text = f"Fix: set {name} of {diagnostic.node_id} to {value}"
    edit = ruled.edit
    edit.text = text
    return RuledEdit(edit, ruled.message)


def fix_text(diagnostic) -> str:
    """What a problem's Fix button says it will do ("Set heads to 4"); "" without a fix."""
    if diagnostic.fix is None:
        return ""
    name, value = diagnostic.fix
    shown = "on" if value is True else "off" if value is False else value
    return f"Set {name.replace('_', ' ')} to {shown}"


def move_edit(graph: Graph, path: Path, moved: dict[str, tuple[float, float]],
              text: str = "Move", grid: float | None = None) -> RuledEdit:
    """Move blocks of ``graph`` (the level at ``path``) to ``moved``'s positions, together,
    snapped clear of every other block when they would land on one: blocks never overlap
    (``layout.nearest_room``; on ``grid``, canvas units, when the canvas snaps), and where
    the nearest free spot leaves a wire's shape label nowhere off the blocks, the nearest
    spot with room for it. The message says when the drop point was not kept."""
    # A wire's room (WIRE_ROOM) from the others keeps the drop where it can: each label then
    # finds a spot off the blocks (beside its wire if it must). Where one cannot (a wire
    # straight across a gap narrower than its label), the blocks go to the nearest spot
    # clear by the least margin that gives every label room, in steps of 10 up to a layer's
    # gap (GAP_X, as a new block keeps): nudging what the user dragged as little as that
    # surprises less than a label on a block, or a tidy moving blocks nobody touched. What
    # was so before is not the drop's.
    tried = _room_for_labels(graph, moved, _too_close_beside(graph, moved), None, grid)
    final = _shifted(moved, tried[-1])
    message = ("" if tried[-1] == (0.0, 0.0)
               else "Moved a little clear of the blocks beside it: room for the wire's shape label"
               if len(tried) > 1 else "Moved to the nearest free spot: blocks never overlap")
    return RuledEdit(MoveNodes(path, final, text=text), message)


def _room_for_labels(graph: Graph, moved: dict[str, tuple[float, float]],
                     close_before: set[Edge], cut_before: set[Edge] | None,
                     grid: float | None) -> list[tuple[float, float]]:
    """The offsets tried for ``moved``'s blocks in ``graph``, the one to take last: the
    nearest spot a wire's room from the other blocks, else the nearest clear by the least
    margin that leaves no wire's shape label newly on a block (``close_before``,
    ``cut_before``: what was so before the gesture; None: ``graph`` as it is)."""
    piece = Graph(nodes={nid: replace(graph.node(nid), pos=tuple(pos))
                         for nid, pos in moved.items()})
    others = Graph(nodes={k: v for k, v in graph.nodes.items() if k not in moved},
                   meta=graph.meta)
    tried = []
    for margin in (*range(int(layout.WIRE_ROOM), int(layout.GAP_X), 10), layout.GAP_X):
        tried.append(layout.nearest_room(others, piece, (0.0, 0.0), margin=margin, grid=grid))
        placed = _placed(graph, _shifted(moved, tried[-1]))
        if _too_close_beside(placed, moved) - close_before:
            continue  # known without drawing the level
        cut = _labels_cut(placed)
        if not cut:
            return tried
        cut_before = _labels_cut(graph) if cut_before is None else cut_before
        if not cut - cut_before:
            return tried
    return tried[:1]  # no margin gives the labels room: the nearest free spot, as ever


def connect_edit(graph: Graph, path: Path, edge: Edge, text: str = "Connect",
                 detached: Edge | None = None) -> RuledEdit:
    """Wire ``edge`` at the level ``path`` (``graph``), first taking up the wire ``detached``
    when one is moved (an occupied input's wire is replaced). Where the two blocks sit beside
    each other closer than the wire's shape label is wide, the label would land on a block:
    the block the wire enters then moves clear by the least margin that gives it room, as a
    dragged block does, in the same undo step, and the message says so."""
    connect = Connect(path, edge, text=text)
    wire = connect if detached is None else Macro([Disconnect(path, detached), connect],
                                                  text=text)
    # the level before and after the wire, sharing its blocks (nothing here edits them)
    before = Graph(nodes=graph.nodes, edges=[e for e in graph.edges if e != detached],
                   meta=graph.meta)
    if edge in before.edges or connection_problem(before, edge, replace=True):
        return RuledEdit(wire)   # refused when done, with the reason
    wired = Graph(nodes=graph.nodes, meta=graph.meta, edges=[
        *(e for e in before.edges if (e.dst, e.dst_port) != (edge.dst, edge.dst_port)), edge])
    if edge not in _too_close_beside(wired, [edge.dst]) or edge not in _labels_cut(wired):
        return RuledEdit(wire)
    moved = {edge.dst: tuple(graph.node(edge.dst).pos)}
    offset = _room_for_labels(wired, moved, _too_close_beside(before, moved),
                              _labels_cut(before), None)[-1]
    if offset == (0.0, 0.0):
        return RuledEdit(wire)
    move = MoveNodes(path, _shifted(moved, offset), text=text)
    return RuledEdit(Macro([wire, move], text=text),
                     f"Moved {edge.dst} a little clear of {edge.src}: room for the wire's "
                     "shape label")


def _shifted(moved: dict[str, tuple[float, float]],
             offset: tuple[float, float]) -> dict[str, tuple[float, float]]:
    return {nid: (round(x + offset[0], 2), round(y + offset[1], 2))
            for nid, (x, y) in moved.items()}


def _placed(graph: Graph, moved: dict[str, tuple[float, float]]) -> Graph:
    """``graph`` with ``moved``'s blocks there (the others shared, not copied)."""
    return Graph(nodes={nid: replace(node, pos=moved.get(nid, node.pos))
                        for nid, node in graph.nodes.items()},
                 edges=list(graph.edges), meta=graph.meta)


def _labels_cut(graph: Graph) -> set[Edge]:
    """The wires whose shape label ``graph`` draws on a block, the label as large as a
    laptop shows it (``layout.LEGIBLE_LABEL``)."""
    drawing = layout.draw_level(graph, layout.LEGIBLE_LABEL)
    return {e for e, _ in layout.labels_on_blocks(drawing)}


def _too_close_beside(graph: Graph, ids: Iterable[str]) -> set[Edge]:
    """The wires of the blocks ``ids`` to a block beside them (heights overlapping) with
    less than a legible label's width and its 3-unit margins between them: the label then
    has a spot only while the other wires leave its route a way round, which a later edit
    elsewhere can take away."""
    ids, room = set(ids), layout.LEGIBLE_LABEL[0] + 6
    rects = layout.block_rects(graph)
    out = set()
    for e in graph.edges:
        if (e.src in ids or e.dst in ids) and e.src in rects and e.dst in rects:
            (ax, ay, aw, ah), (bx, by, bw, bh) = rects[e.src], rects[e.dst]
            gap = max(bx - (ax + aw), ax - (bx + bw))
            if ay < by + bh and by < ay + ah and 0 <= gap < room:
                out.add(e)
    return out


def splice_in_line_edit(graph: Graph, path: Path, node: Node, edge: Edge) -> RuledEdit | None:
    """A block dropped on a wire of the level shown (``graph``, at ``path``): spliced into
    it, in line (``layout.in_line``: the blocks downstream shift along to make room), or,
    where in line would make blocks overlap, beside the wire at ``node.pos`` kept clear of
    every block. None when its ports do not fit the wire. One undo step."""
    scratch = graph.clone()
    # where the wire's reader is: the tidy layout keeps the level's corner, not the drop's
    probe = replace(node, params=dict(node.params), pos=graph.node(edge.dst).pos)
    trial = splice_edit(scratch, (), probe, edge)
    if trial is None:
        return None
    Document(scratch).execute(trial)
    placed = layout.in_line(graph, scratch, node.id, edge)
    if placed is None:
        node.pos = layout.clear_spot(graph, node, node.pos)
        return RuledEdit(splice_edit(graph, path, node, edge))
    node.pos = placed[node.id]
    moves = {n: pos for n, pos in placed.items() if n in graph and graph.node(n).pos != pos}
    splice = splice_edit(graph, path, node, edge)
    if not moves:
        return RuledEdit(splice)
    return RuledEdit(Macro([splice, MoveNodes(path, moves, text="Make room")], text=splice.text),
                     "the blocks after it moved along to make room")
