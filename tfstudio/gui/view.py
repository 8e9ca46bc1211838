"""The canvas widget: zoom around the cursor, pan (middle button or space-drag), rubber-band
selection, a grid, drops from the palette, and search-to-add on double-click or Tab.

A graph too big to show whole at a legible zoom (t5-small's encoder and decoder on a laptop) is
shown from its main layer; a pill at the edge of the canvas names each layer group out of view
("▼ decoder layer ×6") and brings it into view when clicked, so the rest is one click away
rather than a pan the user has to guess at."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent, QPainter, QPen, QWheelEvent
from PySide6.QtWidgets import QGraphicsView, QMenu, QPushButton

from . import theme
from .node_item import NodeItem
from .scene import GRID, GraphScene
from .wire_item import WireItem

BLOCK_MIME = "application/x-tfstudio-block"
MIN_ZOOM, MAX_ZOOM = 0.08, 3.0
# fit-to-view stops here: below it titles and wire shapes are no longer legible, so a graph
# that does not fit is shown from its main layer and the rest is a pan away
LEGIBLE_ZOOM = 0.7
# an open layer group with less than this share of its area in view gets a pill at the edge
# (a quarter out of view hides whole blocks: t5-small's decoder at 71% on a 1366x768 laptop)
MARKED_BELOW = 0.75
MARKER_MIN_VIEW_H = 150  # a canvas shrunk to a strip (the Train workspace) shows no pills
ARROWS = {"below": "▼", "above": "▲", "right": "▶", "left": "◀"}


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
        # pills at the canvas's edges naming the layer groups out of view (see update_markers)
        self.markers: list[QPushButton] = []
        self._markers_timer = QTimer(self, singleShot=True, interval=0)
        self._markers_timer.timeout.connect(self.update_markers)
        scene.changed.connect(lambda _region: self._markers_timer.start())
        self.zoom_changed.connect(lambda _zoom: self._markers_timer.start())

    def graph_scene(self) -> GraphScene:
        return self.scene()

    # ------------------------------------------------------------------ zoom
    @property
    def zoom(self) -> float:
        return self.transform().m11()

    def set_zoom(self, factor: float) -> None:
        """Zoom to ``factor`` (1 = 100%) around the centre of the view (menu and keys)."""
        self.keeps_fit = self._fitting
        factor = max(MIN_ZOOM, min(MAX_ZOOM, factor))
        self.setTransformationAnchor(QGraphicsView.AnchorViewCenter)
        self.scale(factor / self.zoom, factor / self.zoom)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.zoom_changed.emit(self.zoom)

    def zoom_by(self, steps: float) -> None:
        self.set_zoom(self.zoom * (1.15 ** steps))

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
        legible zoom (what a panel opening below it may take without cutting the picture);
        a few pixels are kept for the fit's rounding."""
        need = self._drawn().height() * LEGIBLE_ZOOM + 4
        return max(0, int(self.viewport().height() - need))

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
        if self.zoom > 1.0:
            self.set_zoom(1.0)
        if self.zoom >= LEGIBLE_ZOOM:
            self.centerOn(rect.center())
        else:
            self.set_zoom(LEGIBLE_ZOOM)
            shown = self.mapToScene(self.viewport().rect()).boundingRect()
            fits = shown.width() >= tight.width() and shown.height() >= tight.height()
            # all of it once the margins go; else the main layer, the rest a pill's click away
            self.centerOn(tight.center() if fits else self._focus_rect(items, rect).center())
        self.zoom_changed.emit(self.zoom)

    def _focus_rect(self, items: list[NodeItem], everything: QRectF) -> QRectF:
        """What to show first when not everything fits: the first open group along the
        stream (the main layer; an encoder before its decoder), its left edge in view when it
        is wider than the view; else the start of the graph."""
        frames = [i for i in items if i.frame is not None]
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        if frames:
            # the topmost, then leftmost: tiny-t5's decoder starts left of its encoder
            focus = min(frames, key=lambda i: (i.y(), i.x())).drawn_rect()
        else:
            focus = QRectF(everything.topLeft(), visible.size())
        if focus.width() > visible.width() - 20:
            focus = QRectF(focus.left() - 10, focus.top(), visible.width(), focus.height())
        return focus

    # ------------------------------------------------------------------ groups out of view
    def update_markers(self) -> None:
        """One pill per open layer group mostly out of view, on the edge towards it."""
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        wanted: list[tuple[str, object]] = []
        if self.viewport().height() >= MARKER_MIN_VIEW_H:
            for item in self.scene().items():
                if isinstance(item, NodeItem) and item.node.is_group and item.frame is not None:
                    side = _side_out_of_view(item.drawn_rect(), visible)
                    if side is not None:
                        wanted.append((side, item))
        while len(self.markers) < len(wanted):
            marker = QPushButton(self.viewport())
            marker.setObjectName("edge_marker")
            marker.setCursor(Qt.PointingHandCursor)
            marker.clicked.connect(lambda _=False, m=marker: self.show_item(m.property("item")))
            self.markers.append(marker)
        for marker in self.markers[len(wanted):]:
            marker.hide()
            marker.setProperty("item", None)
        t = theme.current()
        style = (f"QPushButton#edge_marker {{ background: {t.accent}; color: white; "
                 "border: none; border-radius: 11px; padding: 3px 12px; font-weight: bold; }")
        placed: dict[str, float] = {}
        titles = self._title_rects() if wanted else []
        for marker, (side, item) in zip(self.markers, wanted):
            repeat = item.node.typed_params().repeat if item.node.is_group else 1
            label = item.node.label + (f" ×{repeat}" if repeat and repeat > 1 else "")
            marker.setText(f"{ARROWS[side]} {label}")
            marker.setToolTip(f"{label} is out of view: click to show it (or drag with the "
                              "middle button, or Space + drag, to pan)")
            marker.setStyleSheet(style)
            marker.setProperty("item", item)
            marker.adjustSize()
            self._place_marker(marker, side, placed, titles)
            marker.show()
            marker.raise_()

    def _place_marker(self, marker: QPushButton, side: str, placed: dict[str, float],
                      titles: list | None = None) -> None:
        """Along its edge, after the pills already there (from the middle of a horizontal
        edge, from the top of a vertical one), slid along the edge off any block's title
        (``titles``, in viewport pixels) when a free stretch of the edge has room."""
        area = self.viewport().rect()
        w, h, margin = marker.width(), marker.height(), 8
        offset = placed.get(side, 0.0)
        if side in ("below", "above"):
            x = area.center().x() - w / 2 + offset
            y = area.bottom() - h - margin if side == "below" else margin
            steps = [(dx, 0) for k in range(0, area.width(), 16) for dx in (k, -k)]
            placed[side] = offset + w + margin
        else:
            x = area.right() - w - margin if side == "right" else margin
            y = area.top() + margin + 30 + offset
            steps = [(0, dy) for k in range(0, area.height(), 16) for dy in (k, -k)]
            placed[side] = offset + h + margin
        for dx, dy in steps:
            spot = QRectF(x + dx, y + dy, w, h)
            if not area.contains(spot.toRect()):
                continue
            if not any(spot.intersects(t) for t in titles or []):
                x, y = x + dx, y + dy
                break
        marker.move(int(x), int(y))

    def _title_rects(self) -> list[QRectF]:
        """Where block titles are on screen: each block's header, each small block's title
        line inside an open frame (what a pill must not cover)."""
        rects = []
        for item in self.scene().items():
            if not isinstance(item, NodeItem):
                continue
            header = item.mapRectToScene(QRectF(0, 0, item.width, 30))
            rects.append(self.mapFromScene(header).boundingRect())
            for mini in item._minis:
                line = item.mapRectToScene(QRectF(mini.rect.x(), mini.rect.y(),
                                                  mini.rect.width(), 24))
                rects.append(self.mapFromScene(line).boundingRect())
        return [QRectF(r) for r in rects]

    def show_item(self, item) -> None:
        """Bring a block into view at a legible zoom: whole when it fits, else from its
        top-left corner (the start of a layer's stream)."""
        if item is None or item.scene() is not self.scene():
            return
        if self.zoom < LEGIBLE_ZOOM:
            self.set_zoom(LEGIBLE_ZOOM)
        rect = item.drawn_rect()
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        width = min(rect.width() + 20, visible.width())
        height = min(rect.height() + 20, visible.height())
        self.centerOn(QRectF(rect.left() - 10, rect.top() - 10, width, height).center())
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


def _side_out_of_view(rect: QRectF, visible: QRectF) -> str | None:
    """The edge of ``visible`` towards ``rect`` when less than MARKED_BELOW of it is in view
    (None: it is in view): the side its centre lies beyond, measured in view widths and
    heights (a wide layer cut at the right but hanging below reads "below")."""
    shown = rect.intersected(visible)
    area = rect.width() * rect.height()
    if area <= 0 or shown.width() * shown.height() >= MARKED_BELOW * area:
        return None
    dx = (rect.center().x() - visible.center().x()) / max(visible.width(), 1.0)
    dy = (rect.center().y() - visible.center().y()) / max(visible.height(), 1.0)
    if abs(dy) >= abs(dx):
        return "below" if dy > 0 else "above"
    return "right" if dx > 0 else "left"
