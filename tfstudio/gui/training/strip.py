"""The canvas as a strip above the Train workspace's views: telemetry drawn on what it shows
(``apply_to_scene``; the values and words: :mod:`.telemetry`), a legend on it, and a zoom that
fits its blocks.

- The blocks inside an open group frame (the main layer, which is what the strip shows) get a
  band in their measured colour with the value in it (``InnerTelemetry``, a child item of the
  frame: the frame's small blocks are drawn by the frame, not items of their own).
- ``StripLegend`` sits at the strip's right, in a margin the view keeps for it beside the
  canvas (``setViewportMargins``), so no block is ever drawn under it: the colour scale's ends
  with their values, what the number is, and each copy's own value of an open group.
- ``fit_strip_view`` zooms so that the open frame's blocks are whole in the strip (else every
  block), never past 100%, with the frame's title lines whole or out of view.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QFontMetricsF, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from ...graph import GROUP_INPUT, GROUP_OUTPUT
from .. import theme
from ..block_drawing import scaled_font
from ..zoom_rules import small_text_pixels
from .colours import ramp_colour
from .strip_layout import (BAR_H, BAR_W, STRIP_MARGIN, legend_box, strip_zoom, title_cut,
                           topmost)
from .telemetry import Shown, legend_lines, shown_values

BAND_H = 18.0  # scene units: the coloured band along a small block's bottom, its value in it


def inner_rects(frame_item) -> dict[str, QRectF]:
    """{node id: rect in the frame item's coordinates} of the blocks inside an open frame."""
    frame = getattr(frame_item, "frame", None)
    if frame is None:
        return {}
    nodes = frame_item.node.subgraph.nodes
    return {nid: QRectF(x, y, frame.inner_sizes[nid].width, frame.inner_sizes[nid].height)
            for nid, (x, y) in frame.inner.items()
            if nid in nodes and nodes[nid].type not in (GROUP_INPUT, GROUP_OUTPUT)}


class InnerTelemetry(QGraphicsItem):
    """Over an open frame: each inside block's colour band and value."""

    def __init__(self, frame_item):
        super().__init__(frame_item)
        self.setZValue(5)
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.values: dict[str, tuple[QColor, str]] = {}

    def set_values(self, values: dict[str, tuple[QColor, str]]) -> None:
        if values != self.values:
            self.prepareGeometryChange()  # the frame may have grown since the last look
            self.values = dict(values)
            self.update()

    def boundingRect(self) -> QRectF:
        return self.parentItem().boundingRect() if self.parentItem() else QRectF()

    def paint(self, painter: QPainter, option, widget=None) -> None:
        lod = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
        font = scaled_font(small_text_pixels(lod))
        painter.setFont(font)
        for nid, rect in inner_rects(self.parentItem()).items():
            if nid not in self.values:
                continue
            colour, label = self.values[nid]
            band = QRectF(rect.left() + 1, rect.bottom() - BAND_H, rect.width() - 2, BAND_H - 1)
            painter.setPen(Qt.NoPen)
            painter.setBrush(colour)
            painter.drawRoundedRect(band, 4, 4)
            if lod > 0.25:
                painter.setPen(QColor("white") if colour.lightness() < 110 else QColor("black"))
                painter.drawText(band.adjusted(8, 0, -4, 0), Qt.AlignVCenter | Qt.AlignLeft,
                                 label)


def apply_to_scene(scene, snapshot: dict | None, mode: str) -> Shown | None:
    """Colour what the scene shows: its level's blocks, and the blocks inside each open
    frame, on one scale (see :func:`~.telemetry.shown_values`); returns what was coloured
    (None: nothing)."""
    items = getattr(scene, "node_items", {})
    open_groups = tuple(nid for nid, item in items.items()
                        if getattr(item, "frame", None) is not None)
    groups = tuple(nid for nid, item in items.items()
                   if getattr(getattr(item, "node", None), "is_group", False))
    shown = shown_values(snapshot, mode, tuple(getattr(scene, "path", ())), open_groups, groups)
    for node_id, item in items.items():
        setter = getattr(item, "set_telemetry", None)
        if setter is None:
            continue
        value = shown.top.get(node_id) if shown is not None else None
        if value is None:
            setter(None, "")
        else:
            setter(*telemetry_band(shown, value))
    apply_inner(scene, shown)
    return shown


def telemetry_band(shown: Shown, value: float) -> tuple[QColor, str]:
    """A block's band: its value's colour on the blue-to-red scale, and its label."""
    return ramp_colour(shown.scale_at(value), "diverging"), shown.label(value)


def apply_inner(scene, shown: Shown | None) -> int:
    """Colour the blocks inside each open frame of ``scene``; returns how many were coloured."""
    coloured = 0
    for node_id, item in getattr(scene, "node_items", {}).items():
        if not hasattr(item, "childItems"):  # not a graphics item: nothing to draw on
            continue
        overlay = next((c for c in item.childItems() if isinstance(c, InnerTelemetry)), None)
        values = (shown.inner.get(node_id, {}) if shown is not None
                  and getattr(item, "frame", None) is not None else {})
        if overlay is None and not values:
            continue
        if overlay is None:
            overlay = InnerTelemetry(item)
        overlay.set_values({nid: telemetry_band(shown, v) for nid, v in values.items()})
        coloured += len(values)
    return coloured


class StripLegend(QWidget):
    """The telemetry legend beside the canvas: a blue-to-red bar between the smallest and
    largest value shown, and the lines of ``legend_lines``. Hidden, and its margin given back
    to the canvas, when nothing is coloured (its box: ``strip_layout.legend_box``)."""

    def __init__(self, view: QWidget):
        super().__init__(view)
        self.setAttribute(Qt.WA_TransparentForMouseEvents)
        self.lines: list[str] = []
        self._width = 0  # grows to its widest lines while shown, shrinks only when hidden
        self.hide()
        view.installEventFilter(self)

    def set_shown(self, shown: Shown | None) -> None:
        self.lines = legend_lines(shown)
        self.setToolTip("\n".join(self.lines))
        self.setVisible(bool(self.lines))
        self._place()
        self.update()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Resize:
            self._place()
        return False

    def _font(self):
        return scaled_font(11)

    def _place(self) -> None:
        view = self.parentWidget()
        fm = QFontMetricsF(self._font())
        box = legend_box([fm.horizontalAdvance(s) for s in self.lines], fm.lineSpacing(),
                         self._width, (view.width(), view.height()), view.frameWidth())
        self._width = box.kept
        _set_right_margin(view, box.margin)  # the canvas ends left of it
        if box.rect is not None:
            self.setGeometry(*box.rect)
            self.raise_()

    def paintEvent(self, _event) -> None:
        t = theme.current()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.Antialiasing)
        panel = QColor(t.panel)
        panel.setAlpha(235)
        painter.setPen(QPen(QColor(t.color("node_border")), 1))
        painter.setBrush(panel)
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 5, 5)
        bar = QRectF(8, 6, BAR_W, BAR_H)
        gradient = QLinearGradient(bar.topLeft(), bar.topRight())
        for at in (0.0, 0.25, 0.5, 0.75, 1.0):
            gradient.setColorAt(at, ramp_colour(at, "diverging"))
        painter.setPen(Qt.NoPen)
        painter.setBrush(gradient)
        painter.drawRect(bar)
        painter.setFont(self._font())
        painter.setPen(QColor(t.text))
        fm = QFontMetricsF(self._font())
        y = bar.bottom() + 4
        for line in self.lines:
            text = fm.elidedText(line, Qt.ElideRight, self.width() - 16)
            painter.drawText(QRectF(8, y, self.width() - 16, fm.lineSpacing()),
                             Qt.AlignLeft | Qt.AlignVCenter, text)
            y += fm.lineSpacing()


def _set_right_margin(view, pixels: int) -> None:
    if view.viewportMargins().right() != pixels:  # (setting lays the view out again)
        view.setViewportMargins(0, 0, pixels, 0)


def show_legend(scene, shown: Shown | None) -> None:
    """Show ``shown``'s legend on the scene's view (made the first time it is needed)."""
    views = scene.views() if hasattr(scene, "views") else []
    if not views:
        return
    view = views[0]
    legend = view.findChild(StripLegend)
    if legend is None:
        if shown is None:
            return
        legend = StripLegend(view)
    legend.set_shown(shown)


def main_frame(scene):
    """The first open frame (the topmost, then leftmost: the main layer), or None."""
    frames = [i for i in getattr(scene, "node_items", {}).values()
              if getattr(i, "frame", None) is not None]
    first = topmost([(i.x(), i.y()) for i in frames])
    return frames[first] if first is not None else None


def strip_focus(scene) -> QRectF:
    """What the strip must show whole: the blocks inside the main layer's open frame, else
    every block."""
    items = list(getattr(scene, "node_items", {}).values())
    first = main_frame(scene)
    if first is not None:
        rect = QRectF()
        for r in inner_rects(first).values():
            rect = rect.united(first.mapRectToScene(r))
        if not rect.isEmpty():
            return rect
    rect = QRectF()
    for item in items:
        rect = rect.united(item.sceneBoundingRect())
    return rect


def fit_strip_view(view) -> float:
    """Zoom ``view`` so that ``strip_focus`` is whole in it (never past 100%), centred;
    returns the zoom."""
    rect = strip_focus(view.scene())
    if rect.isEmpty():
        return view.zoom
    port = view.viewport().rect()
    view.set_zoom(strip_zoom((rect.width(), rect.height()), (port.width(), port.height())))
    blocks_top = rect.top()
    rect = rect.adjusted(-STRIP_MARGIN, -STRIP_MARGIN, STRIP_MARGIN, STRIP_MARGIN)
    view.centerOn(rect.center())
    frame = main_frame(view.scene())
    if frame is not None:  # the frame's title lines above its blocks: whole, or not at all
        shown = view.mapToScene(view.viewport().rect()).boundingRect()
        if title_cut(frame.scenePos().y(), shown.top(), blocks_top):  # the top margin cuts them
            view.centerOn(rect.center().x(), blocks_top + shown.height() / 2)
    return view.zoom


class StripFitter(QObject):
    """Refits the strip whenever its canvas is resized while ``active()`` (the Train
    workspace): a resized window, a moved splitter or the legend's margin coming or going never
    leaves blocks cut in half."""

    def __init__(self, view, active):
        super().__init__(view)
        self.view, self.active = view, active
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self.fit)
        view.viewport().installEventFilter(self)  # the viewport: it alone shrinks for a legend

    def fit(self) -> None:
        if self.active():
            fit_strip_view(self.view)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Resize and self.active():
            self._timer.start()  # once the layout has settled
        return False
