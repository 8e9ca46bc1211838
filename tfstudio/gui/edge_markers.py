"""The pills at the canvas's edges that name the open layer groups out of view and bring one
into view when clicked (which, and their words: gui.out_of_view), placed off the blocks'
titles."""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QPushButton

from . import theme
from .node_item import NodeItem
from .out_of_view import pill_spot, pill_text, pill_tip, side_out_of_view

MARKER_MIN_VIEW_H = 150  # a canvas shrunk to a strip (the Train workspace) shows no pills


class EdgeMarkers:
    """The pills of one GraphView."""

    def __init__(self, view):
        self.view = view
        self.pills: list[QPushButton] = []

    def update(self) -> None:
        """One pill per open layer group mostly out of view, on the edge towards it."""
        visible = self.view.mapToScene(self.view.viewport().rect()).boundingRect()
        wanted: list[tuple[str, object]] = []
        if self.view.viewport().height() >= MARKER_MIN_VIEW_H:
            for item in self.view.scene().items():
                if isinstance(item, NodeItem) and item.node.is_group and item.frame is not None:
                    side = side_out_of_view(item.drawn_rect().getRect(), visible.getRect())
                    if side is not None:
                        wanted.append((side, item))
        while len(self.pills) < len(wanted):
            marker = QPushButton(self.view.viewport())
            marker.setObjectName("edge_marker")
            marker.setCursor(Qt.PointingHandCursor)
            marker.clicked.connect(lambda _=False, m=marker: self.view.show_item(m.property("item")))
            self.pills.append(marker)
        for marker in self.pills[len(wanted):]:
            marker.hide()
            marker.setProperty("item", None)
        t = theme.current()
        style = (f"QPushButton#edge_marker {{ background: {t.accent}; color: white; "
                 "border: none; border-radius: 11px; padding: 3px 12px; font-weight: bold; }")
        placed: dict[str, float] = {}
        titles = self.title_rects() if wanted else []
        for marker, (side, item) in zip(self.pills, wanted):
            repeat = item.node.typed_params().repeat if item.node.is_group else 1
            marker.setText(pill_text(item.node.label, repeat, side))
            marker.setToolTip(pill_tip(item.node.label, repeat))
            marker.setStyleSheet(style)
            marker.setProperty("item", item)
            marker.adjustSize()
            self._place(marker, side, placed, titles)
            marker.show()
            marker.raise_()

    def _place(self, marker: QPushButton, side: str, placed: dict[str, float],
               titles: list | None = None) -> None:
        """Put ``marker`` where out_of_view.pill_spot says (``titles`` in viewport pixels)."""
        area = self.view.viewport().rect()
        x, y, placed[side] = pill_spot(side, (marker.width(), marker.height()),
                                       (area.width(), area.height()), placed.get(side, 0.0),
                                       [t.getRect() for t in titles or []])
        marker.move(x, y)

    def title_rects(self) -> list[QRectF]:
        """Where block titles are on screen: each block's header, each small block's title
        line inside an open frame (what a pill must not cover)."""
        rects = []
        for item in self.view.scene().items():
            if not isinstance(item, NodeItem):
                continue
            header = item.mapRectToScene(QRectF(0, 0, item.width, 30))
            rects.append(self.view.mapFromScene(header).boundingRect())
            for mini in item._minis:
                line = item.mapRectToScene(QRectF(mini.rect.x(), mini.rect.y(),
                                                  mini.rect.width(), 24))
                rects.append(self.view.mapFromScene(line).boundingRect())
        return [QRectF(r) for r in rects]
