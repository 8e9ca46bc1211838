"""What the editor window's commands and lines say for a document and a selection (no Qt):
which Edit and View commands apply, the layer group a layer setting changes, the window
title, the breadcrumb and the status bar's counts. gui/main_window.py (and breadcrumb.py)
asks these and only shows the answers."""
from __future__ import annotations

from dataclasses import dataclass

from ..graph import Document, Graph, GraphError, ShowRunGraph, graph_at
from .clipboard import looks_like_graph
from .param_count import model_count
from .problem_lines import counts_words
from .text import short_name, with_copies

Target = tuple[tuple[str, ...], str]  # (the path of the level holding it, the group's id)


@dataclass(frozen=True)
class Commands:
    """Which commands are enabled, and the Undo and Redo menu texts (naming the step)."""
    undo: bool
    redo: bool
    undo_text: str
    redo_text: str
    on_blocks: bool   # cut, copy, duplicate, group: need a selected block
    delete: bool      # a selected block or wire
    ungroup: bool     # one group among the selected blocks (what Ungroup dissolves)
    paste: bool       # the clipboard holds a graph
    up: bool          # inside a group
    enter_group: bool  # exactly one layer group selected


def commands(document: Document, graph: Graph, path: tuple[str, ...], selected: list[str],
             anything_selected: bool, clipboard_text: str) -> Commands:
    """The commands for ``graph`` (the level at ``path``) with blocks ``selected`` (ids; a
    wire selected alone makes ``anything_selected`` true and ``selected`` empty)."""
    return Commands(
        undo=document.can_undo, redo=document.can_redo,
        undo_text=f"&Undo {document.undo_text}" if document.can_undo else "&Undo",
        redo_text=f"&Redo {document.redo_text}" if document.can_redo else "&Redo",
        on_blocks=bool(selected), delete=anything_selected,
        ungroup=group_to_ungroup(graph, selected) is not None,
        paste=looks_like_graph(clipboard_text), up=bool(path),
        enter_group=group_to_enter(graph, selected) is not None)


def shortcut_name(text: str, own: bool) -> str:
    """A command's name in the Help menu's shortcut list: its steady name (an Edit or View
    action's icon text, ``own``: "Undo", never "Undo Add Dropout"; another window action's
    tooltip up to its " (" or " — "), without the menu's & and trailing "…" or "."."""
    name = text if own else text.split(" (")[0].split(" — ")[0]
    return name.replace("&", "").rstrip("…").rstrip(".")


def open_group_refusal(root: Graph, group: str) -> str | None:
    """Why ``--open-group`` cannot open ``group`` (not a group at the top level), naming the
    groups there; None when it can."""
    try:
        graph_at(root, (group,))
        return None
    except GraphError:
        groups = [n.id for n in root if n.is_group]
        return (f"--open-group: no group '{group}' at the top level; "
                f"groups here: {', '.join(groups) or 'none'}")


DEFAULT_SIZE = (1500, 940)


def default_size(room: tuple[int, int] | None) -> tuple[int, int]:
    """The window's size on opening: DEFAULT_SIZE, or less on a smaller screen (``room``: the
    screen's available width and height; a 1366x768 laptop gets the whole of it)."""
    if room is None:
        return DEFAULT_SIZE
    return min(DEFAULT_SIZE[0], room[0]), min(DEFAULT_SIZE[1], room[1])


ENTER_REFUSAL = "Select one layer group to enter it"
UNGROUP_REFUSAL = "Select one group to ungroup"
GROUPED_LINE = ("Grouped: double-click the group to edit its inside; set its repeat count in "
                "the inspector")


def _groups(graph: Graph, selected: list[str]) -> list[str]:
    return [n for n in selected if n in graph and graph.node(n).is_group]


def group_to_enter(graph: Graph, selected: list[str]) -> str | None:
    """The group Enter group opens: the selection when it is one layer group alone (else
    None: ENTER_REFUSAL)."""
    return selected[0] if len(selected) == 1 and _groups(graph, selected) == selected else None


def group_to_ungroup(graph: Graph, selected: list[str]) -> str | None:
    """The group Ungroup dissolves: the one group among the selected blocks (none or several:
    None, UNGROUP_REFUSAL)."""
    groups = _groups(graph, selected)
    return groups[0] if len(groups) == 1 else None


def deepest_path(document: Document, path: tuple[str, ...]) -> tuple[str, ...]:
    """The deepest level of ``path`` that still exists (an undo removed the group being
    edited inside: the canvas goes back to the level holding it)."""
    while path:
        try:
            document.graph(path)
            return path
        except GraphError:
            path = path[:-1]
    return ()


def inspected_blocks(path: tuple[str, ...], selected: list[str],
                     inner: tuple[str, str] | None) -> tuple[tuple[str, ...], list[str]]:
    """What the inspector shows: (the level's path, the selected ids there); a block clicked
    inside an open frame (``inner``: the group and the block) is shown at the group's inside."""
    if inner is not None:
        group, block = inner
        return path + (group,), [block]
    return path, selected


def layer_target(root: Graph, graph: Graph, path: tuple[str, ...],
                 selected: list[str]) -> Target | None:
    """The layer group a layer switch from the search changes: the selected group, else
    the group being edited inside, else the model's only layer group; None when none
    (or several and none chosen)."""
    chosen = _groups(graph, selected)
    if len(chosen) == 1:
        return path, chosen[0]
    if path:
        return path[:-1], path[-1]
    groups = [n.id for n in root if n.is_group]
    return ((), groups[0]) if len(groups) == 1 else None


def window_title(display_name: str, last_edit) -> str:
    """The file's name (with Qt's [*] mark for unsaved changes) and, while the document shows
    a run's graph, that run."""
    shown = getattr(last_edit, "edit", last_edit)  # the edit inside its tidy layout (KeepTidy)
    run = f" — graph of run {shown.run}" if isinstance(shown, ShowRunGraph) else ""
    return f"{short_name(display_name)}[*]{run} — tfstudio"


def crumbs(root: Graph, path: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
    """The breadcrumb: the model's name, then each group entered with its copies, each with
    the path it goes back to (names shortened to one line)."""
    out = [(short_name(root.meta.get("name") or "model"), ())]
    graph = root
    for i, gid in enumerate(path):
        node = graph.nodes.get(gid)
        label = short_name(node.label if node is not None else gid)
        repeat = node.typed_params().repeat if node is not None and node.is_group else 1
        out.append((with_copies(label, repeat), path[:i + 1]))
        graph = node.subgraph if node is not None and node.subgraph is not None else graph
    return out


def history_line(undid: bool, step: str, done: bool) -> str:
    """The status bar after Undo (``undid``) or Redo: the step it took, or that there was
    none."""
    if not done:
        return "Nothing to undo" if undid else "Nothing to redo"
    return f"{'Undid' if undid else 'Redid'}: {step}"


def copied_line(blocks: int) -> str:
    return f"Copied {blocks} block{'s' * (blocks != 1)}"


def counts_text(report) -> str:
    """The status bar's line: the one count (gui.param_count; with errors, why there is none,
    as Costs says), then the errors and warnings."""
    parts = [text for text in (model_count(report),) if text]
    parts.append(counts_words(report.errors, report.warnings))
    return "  ·  ".join(parts)


def group_is_open(closed: set[tuple[str, ...]], path: tuple[str, ...], group_id: str) -> bool:
    """A group's frame is open unless the group, by its full path, was closed: the same id at
    another level (a copy's inside, another group) is another group."""
    return path + (group_id,) not in closed


def toggled_group(closed: set[tuple[str, ...]], path: tuple[str, ...],
                  group_id: str) -> set[tuple[str, ...]]:
    """The closed groups after the chevron of ``group_id`` at ``path`` is clicked: closed if it
    was open, open if it was closed, every other group as it was (a view setting, no edit)."""
    return closed ^ {path + (group_id,)}


def context_selection(on_empty: bool, block: str | None,
                      block_selected: bool) -> list[str] | None:
    """What a right-click selects before its menu opens: nothing on the empty canvas (the menu
    is about the level), only the block under it when that block was not selected, and the
    selection as it is (None) on a selected block or another item, so the menu acts on all."""
    if on_empty:
        return []
    if block is not None and not block_selected:
        return [block]
    return None


def inner_click(modified: bool, inner: str | None,
                inner_selected: str | None) -> tuple[str, str | None] | None:
    """What a plain left click on a block does to the selection inside open frames: on a small
    block, ("select", its id) (it looks editable, so one click edits it); elsewhere, with a
    small block selected, ("clear", None); with Shift or Ctrl held, or nothing to clear, None."""
    if modified:
        return None
    if inner is not None:
        return ("select", inner)
    if inner_selected is not None:
        return ("clear", None)
    return None


def double_click_enters(is_group: bool, inner: str | None) -> tuple[str, ...] | None:
    """A double-click on a block: a group is entered, with the small block double-clicked (if
    any) selected inside, as the ids to select; any other block is not entered (None)."""
    if not is_group:
        return None
    return (inner,) if inner is not None else ()


def event_reach(event_path: tuple[str, ...],
                shown: tuple[str, ...]) -> tuple[str, str | None] | None:
    """How an edit at ``event_path`` reaches the canvas showing ``shown``: ("here", None) at
    that level; ("inside", group id) inside one of its groups, however deep (that group's box
    or frame is redrawn); ("above", None) at a level above it (the level shown may be swapped
    or gone); None elsewhere (another group's inside: nothing shown changes)."""
    depth = len(shown)
    if event_path == shown:
        return ("here", None)
    if len(event_path) > depth and event_path[:depth] == shown:
        return ("inside", event_path[depth])
    if event_path == shown[:len(event_path)]:
        return ("above", None)
    return None
