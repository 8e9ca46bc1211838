"""The inspector: what the selected block is, its parameters with their explanations, its
problems, and on a layer group the one-click switches (attention kind, FFN or MoE, norm
placement). With nothing selected it shows the model: name, description, positional scheme.

Every change is a command on the document; the canvas and the problems panel update from it.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QButtonGroup, QCheckBox, QFormLayout, QFrame, QGroupBox,
                               QHBoxLayout, QLabel, QLineEdit, QPushButton, QScrollArea,
                               QVBoxLayout, QWidget)

from ..graph import block_types as bt
from ..graph import GraphChange, GraphError, GraphEvent, get_spec
from ..graph.edit_rules import set_param_edit
from ..graph.switches import describe_model
from . import layer_switches as switches
from .elided_label import ElidedLabel
from .icons import family_icon
from .inspector_lines import (esc as _esc, kv_choices_text, layer_switch_rows,
                              model_facts, origin_line, page_for, params_line, position_refusals,
                              problem_lines, rename_edit, together_line)
from .param_editors import ParamEditor, make_editor
from .scene import GraphScene
from .session import EditorSession
from .text import short_name


def _muted(text: str, wrap: bool = True) -> QLabel:
    """A secondary rich-text line (callers escape user text with ``_esc``)."""
    label = QLabel(text)
    label.setTextFormat(Qt.RichText)
    label.setWordWrap(wrap)
    label.setProperty("role", "muted")
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    return label


class Inspector(QScrollArea):
    enter_group = Signal(str)
    group_requested = Signal()

    def __init__(self, session: EditorSession, scene: GraphScene, parent=None):
        super().__init__(parent)
        self.session = session
        self.scene = scene
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # content wraps to the dock
        self.editors: dict[str, ParamEditor] = {}
        self.switch_buttons: dict[str, dict[str, QPushButton]] = {}
        self.node_id: str | None = None
        self._equal_params = True  # the activation switch keeps a layer's size (a choice)
        self.locked_reason: str | None = None  # why the settings are read-only (a run trains)
        self._feedback = None
        self._rebuild_timer = QTimer(self, singleShot=True, interval=0)
        self._rebuild_timer.timeout.connect(self._rebuild_if_seen)
        self._stale = False  # a rebuild waits for the inspector to be shown
        session.document.subscribe(self._on_event)
        # new diagnostics refresh only their own box: rebuilding the page would pull the
        # spin box out from under a click on its arrows
        session.report_ready.connect(lambda _: self.refresh_feedback())
        scene.selectionChanged.connect(self._rebuild_timer.start)
        scene.path_changed.connect(lambda _: self._rebuild_timer.start())
        scene.inspected_changed.connect(self._rebuild_timer.start)
        self._path: tuple[str, ...] = scene.path
        self.rebuild()

    # ------------------------------------------------------------------ model
    @property
    def path(self) -> tuple[str, ...]:
        """The level of the block shown: the canvas's, or an open frame's inside when a block
        in it was clicked."""
        return self._path

    def _on_event(self, ev: GraphEvent) -> None:
        if (ev.kind is GraphChange.PARAM_CHANGED and ev.path == self.path and ev.node_id == self.node_id
                and ev.name in self.editors):
            # keep the widget the user is typing in; just show the new value
            node = self.session.document.graph(self.path).node(ev.node_id)
            self.editors[ev.name].show(node.param(ev.name))
            return
        self._rebuild_timer.start()

    def set_locked(self, reason: str | None) -> None:
        """Read-only settings while ``reason`` holds (a run trains the graph), said on top of
        the page, so no edit is typed only to be refused on commit."""
        self.locked_reason = reason
        self._apply_lock()  # at once; the page with its banner when next seen
        self._rebuild_timer.start()

    def _rebuild_if_seen(self) -> None:
        # hidden (the Train workspace hides it), a page rebuilt at a run's start and end took
        # 20-30 ms of the event loop for nothing: it is rebuilt when shown
        self._stale = not self.isVisible()
        if not self._stale:
            self.rebuild()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self.rebuild()

    def _apply_lock(self) -> None:
        for editor in self.editors.values():
            editor.widget.setEnabled(not self.locked_reason)
        if self.locked_reason:  # (unlocked, a switch that cannot apply stays off: rebuilt)
            for button in (b for buttons in self.switch_buttons.values() for b in buttons.values()):
                button.setEnabled(False)

    def set_param(self, name: str, value) -> bool:
        """Commit one parameter of the shown node (what an editor does on Enter/click): the
        edit and its sentence are ``graph.edit_rules``'s (new heads keep the attention's kind)."""
        graph = self.session.document.graph(self.path)
        ruled = set_param_edit(graph, self.path, self.node_id, name, value)
        ok = self.session.execute(ruled.edit)
        if ok and ruled.message:
            self.session.message.emit(ruled.message)
        if not ok and self.node_id is not None and name in self.editors:
            node = self.session.document.graph(self.path).node(self.node_id)
            self.editors[name].show(node.param(name))
        return ok

    # ------------------------------------------------------------------ layout
    def rebuild(self) -> None:
        self._rebuild_timer.stop()
        self._stale = False
        self.editors = {}
        self.switch_buttons = {}
        self._feedback = None
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.setSpacing(8)
        self._path, ids = self.scene.inspected()
        graph = self.session.document.graph(self.path)
        if self.locked_reason:
            banner = _muted(_esc(self.locked_reason))
            banner.setProperty("role", "error")
            layout.addWidget(banner)
        page = page_for(ids, graph)
        if page == "block":
            self.node_id = ids[0]
            self._node_page(layout, graph.node(ids[0]))
        elif page == "blocks":
            self.node_id = None
            self._multi_page(layout, ids)
        else:
            self.node_id = None
            self._model_page(layout)
        layout.addStretch(1)
        self._apply_lock()
        old = self.takeWidget()
        if old is not None:
            old.deleteLater()
        self.setWidget(body)

    def _node_page(self, layout: QVBoxLayout, node) -> None:
        spec = get_spec(node.type)
        head = QHBoxLayout()
        icon = QLabel()
        icon.setPixmap(family_icon(spec.family).pixmap(22, 22))
        head.addWidget(icon)
        title = QLineEdit(node.label)
        title.setObjectName("node_title")
        title.setToolTip("The name shown on the block (only a label; the id stays the same).")
        title.editingFinished.connect(lambda: self._rename(title.text()))
        head.addWidget(title, 1)
        layout.addLayout(head)
        layout.addWidget(_muted(f"{spec.title} · id <b>{_esc(node.id)}</b>"))
        layout.addWidget(_muted(_esc(spec.description)))
        self._feedback = QWidget()
        QVBoxLayout(self._feedback).setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._feedback)
        self.refresh_feedback()
        if node.is_group:
            self._group_switches(layout, node)
        if node.type in bt.ATTENTION_TYPES:
            self.kv_choices = _muted(_esc(kv_choices_text(int(node.typed_params().heads))))
            layout.addWidget(self.kv_choices)
        if spec.params:
            box = QGroupBox("Settings")
            form = QVBoxLayout(box)
            form.setSpacing(2)
            for p in spec.params:
                row = QFormLayout()
                row.setContentsMargins(0, 6, 0, 0)
                editor = make_editor(p, node.param(p.name),
                                     lambda v, name=p.name: self.set_param(name, v))
                self.editors[p.name] = editor
                label = QLabel(p.title)
                label.setToolTip(p.description)
                row.addRow(label, editor.widget)
                form.addLayout(row)
                form.addWidget(_muted(_esc(p.description)))
            layout.addWidget(box)

    def refresh_feedback(self) -> None:
        """Show the shown node's parameter count and problems as the latest report has them."""
        box = getattr(self, "_feedback", None)
        graph = self.session.document.graph(self.path)
        if box is None or self.node_id is None or self.node_id not in graph:
            return
        layout = box.layout()
        while layout.count():
            layout.takeAt(0).widget().deleteLater()
        node = graph.node(self.node_id)
        line = params_line(self.session.report, self.path, node)
        if line is not None:
            layout.addWidget(_muted(line))
        self._diagnostics(layout, node.id)

    def _diagnostics(self, layout: QVBoxLayout, node_id: str) -> None:
        for line in problem_lines(self.session.report, self.path, node_id):
            label = QLabel(line)
            label.setWordWrap(True)
            label.setObjectName("diagnostic")
            layout.addWidget(label)

    def _group_switches(self, layout: QVBoxLayout, node) -> None:
        enter = QPushButton("Open the group (double-click)")
        enter.clicked.connect(lambda: self.enter_group.emit(node.id))
        layout.addWidget(enter)
        layer = node.subgraph
        if layer is None:
            return
        box = QGroupBox("Layer switches")
        form = QVBoxLayout(box)
        form.setSpacing(4)
        for row in layer_switch_rows(layer):
            form.addWidget(QLabel(row.title))
            form.addWidget(self._segmented(row.key, row.choices, row.current, row.tip,
                                           lambda choice, k=row.key: self.switch_layer(
                                               node.id, k, choice)))
            if row.key == "activation":
                self.equal_params = QCheckBox("Keep parameters equal (gated: d_ff × 2/3)")
                self.equal_params.setChecked(self._equal_params)
                self.equal_params.setToolTip(
                    "A gated FFN has three d x d_ff matrices, a plain one two: switching "
                    "between them scales d_ff by 2/3 or 3/2 so the layer keeps its size, and "
                    "a comparison is fair. Untick to keep d_ff as it is.")
                self.equal_params.toggled.connect(lambda on: setattr(self, "_equal_params", on))
                form.addWidget(self.equal_params)
        if form.count():
            layout.addWidget(box)
        self._model_switches(layout)

    def _model_switches(self, layout: QVBoxLayout) -> None:
        """The switches of the whole model (positions, norm kind), on the model page and on
        every layer's page alike."""
        root = self.session.root
        box = QGroupBox("Whole model")
        form = QVBoxLayout(box)
        form.setSpacing(4)
        form.addWidget(QLabel("Positions"))
        form.addWidget(self._segmented(
            "position", switches.POSITION_SCHEMES, switches.positional_scheme(root),
            "How the model knows token order: added absolute encodings (sinusoidal, learned) "
            "or inside attention (RoPE rotates q and k; ALiBi penalises distance).",
            self.switch_positions))
        for scheme, why in position_refusals(root).items():  # nothing inside attention
            button = self.switch_buttons["position"][scheme]
            button.setEnabled(False)
            button.setToolTip(why)
        kind = switches.norm_kind(root)
        if kind is not None:
            form.addWidget(QLabel("Norm kind (every norm)"))
            form.addWidget(self._segmented(
                "norm", switches.NORM_KINDS, kind,
                "LayerNorm: (x - mean) / std * gamma + beta. RMSNorm: x / RMS(x) * gamma "
                "(no mean, no shift; LLaMA).", self.switch_norm_kind))
        layout.addWidget(box)

    def _segmented(self, key, choices, current, tip, on_choice) -> QWidget:
        strip = QWidget()
        row = QHBoxLayout(strip)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        group = QButtonGroup(strip)
        group.setExclusive(True)
        self.switch_buttons[key] = {}
        for value, label in choices.items():
            button = QPushButton(label)
            button.setCheckable(True)
            button.setChecked(value == current)
            button.setProperty("segment", True)
            button.setMinimumWidth(24)  # five choices must fit a narrow dock
            button.setToolTip(tip)
            button.setObjectName(f"switch_{key}_{value}")
            button.clicked.connect(lambda _=False, v=value: on_choice(v))
            group.addButton(button)
            row.addWidget(button)
            self.switch_buttons[key][value] = button
        return strip

    def _multi_page(self, layout: QVBoxLayout, ids) -> None:
        heading = QLabel(f"{len(ids)} blocks selected")
        heading.setProperty("role", "heading")
        layout.addWidget(heading)
        layout.addWidget(_muted(together_line(self.session.report, self.path, ids)))
        button = QPushButton("Group into a layer (Ctrl+G)")
        button.clicked.connect(self.group_requested.emit)
        layout.addWidget(button)
        layout.addWidget(_muted("A group holds a sub-graph that can repeat N times, like a "
                                "transformer layer stacked N deep."))

    def _model_page(self, layout: QVBoxLayout) -> None:
        root = self.session.root
        meta = root.meta
        # one line elided to the dock's width: a long name never widens the dock past the window
        heading = ElidedLabel(short_name(meta.get("name") or self.session.display_name),
                              elide=Qt.ElideMiddle)
        heading.setProperty("role", "heading")
        layout.addWidget(heading)
        edited = self.session.edited
        now = describe_model(root)
        self.description = QLabel(_esc(now))  # read from the graph: it follows every edit
        self.description.setWordWrap(True)
        self.description.setTextFormat(Qt.RichText)
        layout.addWidget(self.description)
        origin = origin_line(meta, edited)  # once edited, the words it came with may not hold
        if origin is not None:
            layout.addWidget(_muted(origin))
        layout.addWidget(_muted("<br>".join(model_facts(root, self.session.report, self.path))))
        self._model_switches(layout)
        layout.addWidget(_muted("Sinusoidal and learned encodings are added to the embeddings; "
                                "RoPE and ALiBi act inside every attention block. Learned "
                                "tables cannot go past their length; ALiBi extrapolates best."))
        layout.addWidget(_muted(
            "<b>Getting started</b><br>Drag blocks from the palette, or press Tab (or double-"
            "click the canvas) to search. Drag from an output port (right) to an input port "
            "(left) to wire. Double-click a layer group to edit its inside. Select a block to "
            "see its settings here; problems are outlined on the block with the fix in its "
            "tooltip."))

    # ------------------------------------------------------------------ edits
    def _rename(self, text: str) -> None:
        if self.node_id is None:
            return
        edit = rename_edit(self.session.document.graph(self.path), self.path, self.node_id, text)
        if edit is not None:
            self.session.execute(edit)

    def switch_layer(self, group_id: str, key: str, choice: str,
                     path: tuple[str, ...] | None = None) -> bool:
        """Rewrite the inside of layer group ``group_id`` at ``path`` (default: the level
        shown) in one undoable step."""
        path = self.path if path is None else tuple(path)
        return self.apply_setting(key, choice, (path, group_id))

    def switch_norm_kind(self, kind: str) -> bool:
        """Every norm of the model, at every depth, as LayerNorm or RMSNorm (one step)."""
        return self.apply_setting("norm", kind)

    def switch_positions(self, scheme: str) -> bool:
        return self.apply_setting("position", scheme)

    def apply_setting(self, key: str, value: str, layer=None) -> bool:
        """Set switch ``key`` on the layer group ``layer`` (its level's path, its id) or the
        whole model, as layer_switches.setting_edit rules (a refusal is said, not raised)."""
        try:
            edit = switches.setting_edit(self.session.root, key, value, layer,
                                         self._equal_params)
        except (GraphError, ValueError) as exc:
            self.session.message.emit(str(exc))
            self._rebuild_timer.start()
            return False
        return self.session.execute(edit)
