"""Graph positions and canvas points (gui/canvas_units.py), without Qt: a canvas point is a
graph position spread by the layout's scale, read back to a hundredth of a unit."""
from tfstudio.graph.layout import CANVAS_SCALE
from tfstudio.gui.canvas_units import SPREAD, to_graph


class _Point:
    """What the canvas hands to_graph (a QPointF): x() and y()."""

    def __init__(self, x: float, y: float):
        self._x, self._y = x, y

    def x(self) -> float:
        return self._x

    def y(self) -> float:
        return self._y


def test_a_canvas_point_is_a_graph_position_spread_by_the_layouts_scale_to_a_hundredth():
    assert SPREAD == CANVAS_SCALE
    assert to_graph(_Point(SPREAD * 3.0, -SPREAD * 1.5)) == (3.0, -1.5)
    assert to_graph(_Point(SPREAD * 0.123, SPREAD * 0.004)) == (0.12, 0.0)
    assert to_graph(_Point(SPREAD * 0.127, -SPREAD * 0.006)) == (0.13, -0.01)
