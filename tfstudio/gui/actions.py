"""The editor's actions (menus, toolbar, shortcuts) with platform-standard key bindings.

Standard operations use QKeySequence's standard keys, so Save is Ctrl+S on Linux and Windows
and Cmd+S on macOS; editor-specific ones follow the node editors people know (Shift+A adds
a block as in Blender, Ctrl+G groups, F fits the view).
"""
from __future__ import annotations

from types import SimpleNamespace

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from .editor_state import shortcut_name

K = QKeySequence.StandardKey


def _action(window, text: str, slot, shortcut=None, tip: str = "", checkable: bool = False):
    action = QAction(text, window)
    if shortcut is not None:
        if isinstance(shortcut, (list, tuple)):
            action.setShortcuts([QKeySequence(s) for s in shortcut])
        else:
            action.setShortcut(QKeySequence(shortcut))
    if tip:
        action.setStatusTip(tip)
        action.setToolTip(f"{text.replace('&', '').rstrip('…')} — {tip}")
    action.setCheckable(checkable)
    if checkable:
        action.toggled.connect(slot)
    else:
        action.triggered.connect(lambda _=False: slot())
    window.addAction(action)  # shortcuts work even when the menu bar is hidden
    return action


def create_actions(w) -> SimpleNamespace:
    """Every action of main window ``w``, wired to its methods."""
    a = SimpleNamespace()
    a.new = _action(w, "&New", w.new_empty, K.New, "an empty canvas")
    a.new_preset = _action(w, "New from &preset…", w.new_from_preset, "Ctrl+Shift+N",
                           "start from a built-in architecture")
    a.open = _action(w, "&Open…", w.open_dialog, K.Open, "open a graph file (.json)")
    a.save = _action(w, "&Save", w.save, K.Save, "save the graph")
    a.save_as = _action(w, "Save &as…", w.save_as, K.SaveAs, "save under a new name")
    a.export_png = _action(w, "Export canvas as P&NG…", lambda: w.export_canvas("png"),
                           tip="a picture of this level of the graph")
    a.export_svg = _action(w, "Export canvas as S&VG…", lambda: w.export_canvas("svg"),
                           tip="a vector picture of this level of the graph")
    a.quit = _action(w, "&Quit", w.close, K.Quit)

    a.undo = _action(w, "&Undo", w.undo, K.Undo)
    # Ctrl+Y and Ctrl+Shift+Z both redo, as in most editors (QKeySequence.Redo gives one)
    a.redo = _action(w, "&Redo", w.redo, _with(K.Redo, "Ctrl+Shift+Z", "Ctrl+Y"))
    a.cut = _action(w, "Cu&t", w.cut, K.Cut)
    a.copy = _action(w, "&Copy", w.copy, K.Copy, "copy the selected blocks and their wires")
    a.paste = _action(w, "&Paste", w.paste, K.Paste)
    a.duplicate = _action(w, "&Duplicate", w.duplicate, "Ctrl+D",
                          "copy and paste the selection in one go")
    a.delete = _action(w, "De&lete", w.delete, [QKeySequence(K.Delete), "Backspace"],
                       "delete the selected blocks and wires")
    a.select_all = _action(w, "Select &all", w.select_all, K.SelectAll)
    a.add_block = _action(w, "&Add block…", w.search_at_cursor, "Shift+A",
                          "search the catalogue (also Tab or double-click on the canvas)")
    a.group = _action(w, "&Group", w.group_selection, "Ctrl+G",
                      "put the selected blocks into a layer group")
    a.ungroup = _action(w, "U&ngroup", w.ungroup_selection, "Ctrl+Shift+G",
                        "replace the group by its inside, repeated")
    a.tidy = _action(w, "&Tidy layout", w.tidy, "Ctrl+L", "lay blocks out in layers, no overlaps")
    a.enter_group = _action(w, "&Enter group", w.enter_selected_group, "Ctrl+E",
                            "edit the inside of the selected layer group (or double-click it)")

    a.fit = _action(w, "&Fit to view", w.view.fit_to_view, ["F", "Home"], "show every block")
    a.zoom_in = _action(w, "Zoom &in", lambda: w.view.zoom_by(1), K.ZoomIn)
    a.zoom_out = _action(w, "Zoom &out", lambda: w.view.zoom_by(-1), K.ZoomOut)
    a.zoom_reset = _action(w, "&Actual size", lambda: w.view.set_zoom(1.0), "Ctrl+0")
    a.up = _action(w, "&Up one level", w.go_up, ["Alt+Up", "Ctrl+Backspace"],
                   "leave the group you are in")
    a.snap = _action(w, "&Snap to grid", w.set_snap, checkable=True,
                     tip="moved blocks land on the grid")
    a.dark = _action(w, "&Dark theme", w.set_dark, checkable=True)
    a.code = _action(w, "Generated &PyTorch code…", w.show_code,
                     tip="the module the compiler builds from this graph")
    a.about = _action(w, "&About tfstudio", w.about)
    a.shortcuts = _action(w, "&Keyboard shortcuts", w.show_shortcuts, K.HelpContents,
                          "every command that has a key")
    return a


def _with(standard, *extra: str) -> list[QKeySequence]:
    """The platform's keys for ``standard`` and ``extra`` ones, each once."""
    keys = list(QKeySequence.keyBindings(standard))
    for text in extra:
        key = QKeySequence(text)
        if key not in keys:
            keys.append(key)
    return keys


def shortcut_rows(actions: SimpleNamespace, window=None) -> list[tuple[str, str]]:
    """(command, keys) for every action that has a key, in menu order, then the window's own
    actions that have one (the Build/Train workspaces' Ctrl+1/Ctrl+2): the Help menu's list is
    made from the actions themselves, so it cannot fall behind them. A command is named by its
    steady name (Undo, never "Undo Add Dropout", which the menu shows for the moment)."""
    mine = list(vars(actions).values())
    others = [] if window is None else [a for a in QWidget.actions(window) if a not in mine]
    rows = []
    for action in mine + others:
        keys = [k.toString(QKeySequence.NativeText) for k in action.shortcuts()]
        if not keys:
            continue
        own = action in mine
        rows.append((shortcut_name(action.iconText() if own else action.toolTip(), own),
                     ", ".join(keys)))
    return rows
