"""What Delete removes (no Qt): the selected blocks, and the selected wires that do not go with
them, as one undo step; a group's inputs and outputs blocks are kept, saying why. gui/scene.py
asks this with its selection and runs the edit."""
from __future__ import annotations

from ..graph import GROUP_INPUT, GROUP_OUTPUT, Disconnect, Edit, Graph, Macro, RemoveNodes

KEEPS_BOUNDARY = ("A group's inputs and outputs blocks cannot be deleted; ungroup the group "
                  "(Ctrl+Shift+G) to dissolve it instead")


def deletion(graph: Graph, path: tuple[str, ...], ids, wires) -> tuple[Edit | None, str]:
    """The one edit Delete makes for blocks ``ids`` and wires ``wires`` (edges) selected at
    ``path`` (None: nothing to delete), and the line to show ("" when there is nothing to say)."""
    ids = list(ids)
    boundary = [n for n in ids if graph.node(n).type in (GROUP_INPUT, GROUP_OUTPUT)]
    line = KEEPS_BOUNDARY if boundary else ""
    ids = [n for n in ids if n not in boundary]
    # a wire of a deleted block goes with the block: only the others are disconnected
    commands: list[Edit] = [Disconnect(path, e) for e in wires
                            if e.src not in ids and e.dst not in ids]
    if ids:
        commands.append(RemoveNodes(path, ids))
    if not commands:
        return None, line
    return (commands[0] if len(commands) == 1 else Macro(commands, text="Delete")), line
