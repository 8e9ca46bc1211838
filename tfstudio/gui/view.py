"""The canvas widget: zoom around the cursor, pan (middle button or space-drag), rubber-band
selection, a grid, drops from the palette, and search-to-add on double-click or Tab.

A graph too big to show whole at a legible zoom (t5-small's encoder and decoder on a laptop) is
shown from its main layer; a pill at the edge of the canvas names each layer group out of view
("▼ decoder layer ×6") and brings it into view when clicked, so the rest is one click away
rather than a pan the user has to guess at."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent, QPainter, QPen, QWheelEvent
from PySide6.QtWidgets import QGraphicsView, QMenu, QPushButton

from . import theme
from .canvas_gestures import cursor_after_pan, key_action, landing_point, starts_pan
from .canvas_grid import grid_lines, shows_grid
from .edge_markers import EdgeMarkers
from .editor_state import context_selection
from .node_item import NodeItem
from .out_of_view import focus_rect
from .scene import GRID, GraphScene
from .wire_item import WireItem
from .zoom_rules import (LEGIBLE_ZOOM, clamped, fit_centre, fit_zoom, shown_part, spare_height,
                         stepped, wheel_steps)

BLOCK_MIME = "application/x-tfstudio-block"
_CURSORS = {"open_hand": Qt.OpenHandCursor, "arrow": Qt.ArrowCursor}
_KEYS = {Qt.Key_Space: "space", Qt.Key_Escape: "escape"}  # the keys the canvas itself takes


class GraphView(QGraphicsView):
    search_requested = Signal(QPointF)   # scene position where a searched block should go
    zoom_changed = Signal(float)
    context_menu_opening = Signal()      # before the right-click menu shows: actions rename

    def __init__(self, scene: GraphScene, parent=None):
        super().__init__(scene, parent)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing
                            | QPainter.SmoothPixmapTransform)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        # the grid is drawn once per zoom or scroll, not again under every recoloured block
        # (a live run recolours the canvas while it trains); a theme change redraws it
        self.setCacheMode(QGraphicsView.CacheBackground)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.AnchorViewCenter)
        self.setDragMode(QGraphicsView.RubberBandDrag)
        self.setRubberBandSelectionMode(Qt.IntersectsItemShape)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setAcceptDrops(True)
        self.setFocusPolicy(Qt.StrongFocus)
        self.context_actions: list = []   # the main window's edit actions, for right-click
        self._space_down = False
        self._pan_from: QPointF | None = None
        # a fitted view stays fitted when the panels around it change its size, until the
        # user zooms or pans; ``refit_allowed`` says when another fit owns the view (the
        # Train workspace's strip)
        self.keeps_fit = False
        self._fitting = False
        self.refit_allowed: Callable[[], bool] = lambda: True
        self._refit_timer = QTimer(self, singleShot=True, interval=0)
        self._refit_timer.timeout.connect(self._refit)
        self._whole_timer = QTimer(self, singleShot=True, interval=0)
        self._whole_timer.timeout.connect(self._refit_if_cut)
        self.edge_markers = EdgeMarkers(self)
        self._markers_timer = QTimer(self, singleShot=True, interval=0)
        self._markers_timer.timeout.connect(self.update_markers)
        scene.changed.connect(lambda _region: self._markers_timer.start())
        self.zoom_changed.connect(lambda _zoom: self._markers_timer.start())

    @property
    def markers(self) -> list[QPushButton]:
        """The pills at the canvas's edges naming the layer groups out of view."""
        return self.edge_markers.pills

    def update_markers(self) -> None:
        self.edge_markers.update()

    def graph_scene(self) -> GraphScene:
        return self.scene()

    # ------------------------------------------------------------------ zoom
    @property
    def zoom(self) -> float:
        return self.transform().m11()

    def set_zoom(self, factor: float) -> None:
        """Zoom to ``factor`` (1 = 100%) around the centre of the view (menu and keys)."""
        self.keeps_fit = self._fitting
        factor = clamped(factor)
        self.setTransformationAnchor(QGraphicsView.AnchorViewCenter)
        self.scale(factor / self.zoom, factor / self.zoom)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.zoom_changed.emit(self.zoom)

    def zoom_by(self, steps: float) -> None:
        self.set_zoom(stepped(self.zoom, steps))

    def _refit(self) -> None:
        if self.keeps_fit and self.refit_allowed():
            self.fit_to_view()

    def keep_whole(self) -> None:
        """After an edit: a fitted view whose picture now runs past its edges (a block spliced
        in line moved the rest along) fits again; a view the user zoomed or panned stays."""
        if self.keeps_fit:
            self._whole_timer.start()

    def _refit_if_cut(self) -> None:
        shown = self.mapToScene(self.viewport().rect()).boundingRect()
        if not shown.contains(self._drawn()):
            self._refit()

    def wheelEvent(self, event: QWheelEvent) -> None:
        self.keeps_fit = False
        steps = wheel_steps(event.angleDelta().y())
        if steps:
            self.zoom_at(stepped(self.zoom, steps), event.position())
        event.accept()

    def zoom_at(self, factor: float, view_pos: QPointF) -> None:
        """Zoom to ``factor`` keeping the scene point under ``view_pos`` where it is."""
        factor = clamped(factor)
        before = self.mapToScene(view_pos.toPoint())
        self.setTransformationAnchor(QGraphicsView.NoAnchor)
        self.scale(factor / self.zoom, factor / self.zoom)
        shift = self.mapToScene(view_pos.toPoint()) - before
        self.translate(shift.x(), shift.y())
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.zoom_changed.emit(self.zoom)

    def fit_to_view(self) -> None:
        """Show every block, never magnified past 100% nor shrunk below a legible zoom; a graph
        too big for that is shown around its largest open group (the main layer). The view
        keeps the fit through changes of its size until the user zooms or pans."""
        self._fitting = True
        try:
            self._fit()
        finally:
            self._fitting = False
        self.keeps_fit = True

    def _drawn(self) -> QRectF:
        """What the level draws: its blocks and wires (labels and legs included)."""
        rect = QRectF()
        for item in self.scene().items():
            if isinstance(item, NodeItem) or (isinstance(item, WireItem) and item.edge):
                rect = rect.united(item.drawn_rect())
        return rect

    def spare_height(self) -> int:
        """Pixels of height the canvas can give up and still show the whole level at the
        legible zoom (zoom_rules.spare_height)."""
        return spare_height(self._drawn().height(), self.viewport().height())

    def _fit(self) -> None:
        items = [i for i in self.scene().items() if isinstance(i, NodeItem)]
        if not items:
            self.resetTransform()
            self.centerOn(0, 0)
            self.zoom_changed.emit(self.zoom)
            return
        rect = self._drawn()
        tight = QRectF(rect)
        rect.adjust(-40, -40, 40, 40)
        self.fitInView(rect, Qt.KeepAspectRatio)
        fitted = self.zoom
        if fit_zoom(fitted) != fitted:
            self.set_zoom(fit_zoom(fitted))
        if fitted >= LEGIBLE_ZOOM:
            self.centerOn(rect.center())
        else:
            shown = self.mapToScene(self.viewport().rect()).boundingRect()
            # all of it once the margins go; else the main layer, the rest a pill's click away
            self.centerOn(*fit_centre(tight.getRect(), shown.getRect(),
                                      self._focus_rect(items, rect).getRect()))
        self.zoom_changed.emit(self.zoom)

    def _focus_rect(self, items: list[NodeItem], everything: QRectF) -> QRectF:
        """out_of_view.focus_rect for this view's open groups (their drawn rectangles)."""
        frames = [((i.x(), i.y()), i.drawn_rect().getRect()) for i in items
                  if i.frame is not None]
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        return QRectF(*focus_rect(frames, everything.getRect(), visible.getRect()))

    def show_item(self, item) -> None:
        """Bring a block into view at a legible zoom: whole when it fits, else from its
        top-left corner (the start of a layer's stream)."""
        if item is None or item.scene() is not self.scene():
            return
        if self.zoom < LEGIBLE_ZOOM:
            self.set_zoom(LEGIBLE_ZOOM)
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        self.centerOn(QRectF(*shown_part(item.drawn_rect().getRect(), visible.getRect())).center())
        self._markers_timer.start()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        self._markers_timer.start()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._markers_timer.start()
        if self.keeps_fit:  # the Problems panel grew, a dock closed: show it all again
            self._refit_timer.start()

    def center_on_node(self, node_id: str) -> None:
        item = self.graph_scene().node_items.get(node_id)
        if item is not None:
            self.centerOn(item.sceneBoundingRect().center())

    # ------------------------------------------------------------------ grid
    def changeEvent(self, event) -> None:
        if event.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange,
                            QEvent.StyleChange):
            self.resetCachedContent()  # the cached grid has the old theme's colours
        super().changeEvent(event)

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:
        t = theme.current()
        painter.fillRect(rect, t.color("canvas"))
        if not shows_grid(self.zoom):
            return
        minor = QPen(t.color("grid_minor"), 0)
        major = QPen(t.color("grid_major"), 0)
        for x, is_major in grid_lines(rect.left(), rect.right(), GRID):
            painter.setPen(major if is_major else minor)
            painter.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()))
        for y, is_major in grid_lines(rect.top(), rect.bottom(), GRID):
            painter.setPen(major if is_major else minor)
            painter.drawLine(QPointF(rect.left(), y), QPointF(rect.right(), y))

    # ------------------------------------------------------------------ pan
    def mousePressEvent(self, event: QMouseEvent) -> None:
        if starts_pan(event.button() == Qt.MiddleButton, event.button() == Qt.LeftButton,
                      self._space_down):
            self._pan_from = event.position()
            self.keeps_fit = False  # the user chose what to look at
            self.viewport().setCursor(Qt.ClosedHandCursor)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._pan_from is not None:
            delta = event.position() - self._pan_from
            self._pan_from = event.position()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - delta.x())
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - delta.y())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._pan_from is not None and event.button() in (Qt.MiddleButton, Qt.LeftButton):
            self._pan_from = None
            self.viewport().setCursor(_CURSORS[cursor_after_pan(self._space_down)])
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if self.itemAt(event.position().toPoint()) is None:
            self.search_requested.emit(self.mapToScene(event.position().toPoint()))
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if not self._key(event, True):
            super().keyPressEvent(event)

    def keyReleaseEvent(self, event: QKeyEvent) -> None:
        if not self._key(event, False):
            super().keyReleaseEvent(event)

    def _key(self, event: QKeyEvent, pressed: bool) -> bool:
        """Apply canvas_gestures.key_action to a key event; False leaves it to Qt."""
        key = _KEYS.get(event.key(), "")
        action = key_action(key, pressed, event.isAutoRepeat(),
                            key == "escape" and self.graph_scene().dragging_wire)
        if action == "cancel_wire":
            self.graph_scene()._cancel_drag()
            return True
        if action is None:
            return False
        self._space_down = action == "space_down"
        self.viewport().setCursor(_CURSORS[cursor_after_pan(self._space_down)])
        event.accept()
        return True

    def focusNextPrevChild(self, forward: bool) -> bool:
        # Tab on the canvas is search-to-add (as in Blender and ComfyUI), not focus traversal
        self.search_requested.emit(self.cursor_scene_pos())
        return True

    def cursor_scene_pos(self) -> QPointF:
        local = self.viewport().mapFromGlobal(self.cursor().pos())
        size = self.viewport().rect().size()
        return self.mapToScene(QPoint(*landing_point((local.x(), local.y()),
                                                     (size.width(), size.height()))))

    def contextMenuEvent(self, event) -> None:
        item = self.itemAt(event.pos())
        block = item if isinstance(item, NodeItem) else None
        chosen = context_selection(item is None, block.node.id if block else None,
                                   bool(block and block.isSelected()))
        if chosen == []:
            self.graph_scene().clearSelection()
        elif chosen:
            self.graph_scene().select_nodes(chosen)
        if self.context_actions:
            self.context_menu_opening.emit()
            menu = QMenu(self)
            for action in self.context_actions:
                if action is None:
                    menu.addSeparator()
                else:
                    menu.addAction(action)
            menu.exec(event.globalPos())

    # ------------------------------------------------------------------ drops from the palette
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasFormat(BLOCK_MIME):
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event) -> None:
        if event.mimeData().hasFormat(BLOCK_MIME):
            # the frame or wire the block would land in lights up before it is let go
            block_type = bytes(event.mimeData().data(BLOCK_MIME)).decode("utf-8")
            self.graph_scene().show_drop_target(self.mapToScene(event.position().toPoint()),
                                                block_type)
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dragLeaveEvent(self, event) -> None:
        self.graph_scene().show_drop_target(None)
        super().dragLeaveEvent(event)

    def dropEvent(self, event) -> None:
        if not event.mimeData().hasFormat(BLOCK_MIME):
            super().dropEvent(event)
            return
        block_type = bytes(event.mimeData().data(BLOCK_MIME)).decode("utf-8")
        self.graph_scene().add_block(block_type, self.mapToScene(event.position().toPoint()),
                                     splice=True)
        event.acceptProposedAction()
        self.setFocus()
