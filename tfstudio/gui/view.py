"""The canvas widget: zoom around the cursor, pan (middle button or space-drag), rubber-band
selection, a grid, drops from the palette, and search-to-add on double-click or Tab."""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent, QPainter, QPen, QWheelEvent
from PySide6.QtWidgets import QGraphicsView, QMenu

from . import theme
from .node_item import NodeItem
from .scene import GRID, GraphScene

BLOCK_MIME = "application/x-tfstudio-block"
MIN_ZOOM, MAX_ZOOM = 0.08, 3.0
# fit-to-view stops here: below it titles and wire shapes are no longer legible, so a graph
# that does not fit is shown from its main layer and the rest is a pan away
LEGIBLE_ZOOM = 0.7


class GraphView(QGraphicsView):
    search_requested = Signal(QPointF)   # scene position where a searched block should go
    zoom_changed = Signal(float)

    def __init__(self, scene: GraphScene, parent=None):
        super().__init__(scene, parent)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing
                            | QPainter.SmoothPixmapTransform)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
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

    def graph_scene(self) -> GraphScene:
        return self.scene()

    # ------------------------------------------------------------------ zoom
    @property
    def zoom(self) -> float:
        return self.transform().m11()

    def set_zoom(self, factor: float) -> None:
        """Zoom to ``factor`` (1 = 100%) around the centre of the view (menu and keys)."""
        factor = max(MIN_ZOOM, min(MAX_ZOOM, factor))
        self.setTransformationAnchor(QGraphicsView.AnchorViewCenter)
        self.scale(factor / self.zoom, factor / self.zoom)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.zoom_changed.emit(self.zoom)

    def zoom_by(self, steps: float) -> None:
        self.set_zoom(self.zoom * (1.15 ** steps))

    def wheelEvent(self, event: QWheelEvent) -> None:
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.zoom_at(self.zoom * (1.15 ** steps), event.position())
        event.accept()

    def zoom_at(self, factor: float, view_pos: QPointF) -> None:
        """Zoom to ``factor`` keeping the scene point under ``view_pos`` where it is."""
        factor = max(MIN_ZOOM, min(MAX_ZOOM, factor))
        before = self.mapToScene(view_pos.toPoint())
        self.setTransformationAnchor(QGraphicsView.NoAnchor)
        self.scale(factor / self.zoom, factor / self.zoom)
        shift = self.mapToScene(view_pos.toPoint()) - before
        self.translate(shift.x(), shift.y())
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.zoom_changed.emit(self.zoom)

    def fit_to_view(self) -> None:
        """Show every block, never magnified past 100% nor shrunk below a legible zoom; a graph
        too big for that is shown around its largest open group (the main layer)."""
        items = [i for i in self.scene().items() if isinstance(i, NodeItem)]
        if not items:
            self.resetTransform()
            self.centerOn(0, 0)
            self.zoom_changed.emit(self.zoom)
            return
        rect = QRectF()
        for item in items:
            rect = rect.united(item.sceneBoundingRect())
        rect.adjust(-40, -40, 40, 40)
        self.fitInView(rect, Qt.KeepAspectRatio)
        if self.zoom > 1.0:
            self.set_zoom(1.0)
        if self.zoom >= LEGIBLE_ZOOM:
            self.centerOn(rect.center())
        else:
            self.set_zoom(LEGIBLE_ZOOM)
            self.centerOn(self._focus_rect(items, rect).center())
        self.zoom_changed.emit(self.zoom)

    def _focus_rect(self, items: list[NodeItem], everything: QRectF) -> QRectF:
        """What to show first when not everything fits: the first open group along the
        stream (the main layer; an encoder before its decoder), its left edge in view when it
        is wider than the view; else the start of the graph."""
        frames = [i for i in items if i.frame is not None]
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        if frames:
            focus = min(frames, key=lambda i: (i.x(), i.y())).sceneBoundingRect()
        else:
            focus = QRectF(everything.topLeft(), visible.size())
        if focus.width() > visible.width() - 20:
            focus = QRectF(focus.left() - 10, focus.top(), visible.width(), focus.height())
        return focus

    def center_on_node(self, node_id: str) -> None:
        item = self.graph_scene().node_items.get(node_id)
        if item is not None:
            self.centerOn(item.sceneBoundingRect().center())

    # ------------------------------------------------------------------ grid
    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:
        t = theme.current()
        painter.fillRect(rect, t.color("canvas"))
        if self.zoom < 0.3:
            return
        left = int(rect.left() // GRID) * GRID
        top = int(rect.top() // GRID) * GRID
        minor = QPen(t.color("grid_minor"), 0)
        major = QPen(t.color("grid_major"), 0)
        x = left
        while x < rect.right():
            painter.setPen(major if round(x / GRID) % 5 == 0 else minor)
            painter.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()))
            x += GRID
        y = top
        while y < rect.bottom():
            painter.setPen(major if round(y / GRID) % 5 == 0 else minor)
            painter.drawLine(QPointF(rect.left(), y), QPointF(rect.right(), y))
            y += GRID

    # ------------------------------------------------------------------ pan
    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MiddleButton or (self._space_down
                                                 and event.button() == Qt.LeftButton):
            self._pan_from = event.position()
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
            self.viewport().setCursor(Qt.OpenHandCursor if self._space_down else Qt.ArrowCursor)
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
        if event.key() == Qt.Key_Space and not event.isAutoRepeat():
            self._space_down = True
            self.viewport().setCursor(Qt.OpenHandCursor)
            event.accept()
            return
        if event.key() == Qt.Key_Escape and self.graph_scene().dragging_wire:
            self.graph_scene()._cancel_drag()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key_Space and not event.isAutoRepeat():
            self._space_down = False
            self.viewport().setCursor(Qt.ArrowCursor)
            event.accept()
            return
        super().keyReleaseEvent(event)

    def focusNextPrevChild(self, forward: bool) -> bool:
        # Tab on the canvas is search-to-add (as in Blender and ComfyUI), not focus traversal
        self.search_requested.emit(self.cursor_scene_pos())
        return True

    def cursor_scene_pos(self) -> QPointF:
        local = self.viewport().mapFromGlobal(self.cursor().pos())
        if not self.viewport().rect().contains(local):
            local = self.viewport().rect().center()
        return self.mapToScene(local)

    def contextMenuEvent(self, event) -> None:
        if self.itemAt(event.pos()) is None:
            self.graph_scene().clearSelection()
        elif isinstance(self.itemAt(event.pos()), NodeItem):
            item = self.itemAt(event.pos())
            if not item.isSelected():
                self.graph_scene().select_nodes([item.node.id])
        if self.context_actions:
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
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event) -> None:
        if not event.mimeData().hasFormat(BLOCK_MIME):
            super().dropEvent(event)
            return
        block_type = bytes(event.mimeData().data(BLOCK_MIME)).decode("utf-8")
        self.graph_scene().add_block(block_type, self.mapToScene(event.position().toPoint()))
        event.acceptProposedAction()
        self.setFocus()
