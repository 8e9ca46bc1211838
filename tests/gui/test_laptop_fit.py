"""Every preset, and every group of every preset entered, shows whole on a 1366x768 laptop at
a legible zoom (the fit never goes under 70%): a level that cannot fit is wrapped into bands
(``layout.tidy_positions``), which the editor applies as it opens a file (``untangled``); a
layer's sublayers go in line when their stream's row and branches' row stack too tall, rows
and bands closer when that is not enough, and an open frame's inside wraps too."""
from __future__ import annotations

import html

import pytest
from PySide6.QtCore import QRectF

from tfstudio.graph import Disconnect
from tfstudio.graph.block_types import HEAD_TYPES
from tfstudio.gui.node_item import NodeItem
from tfstudio.gui.problems import DIAG_ROLE
from tfstudio.gui.zoom_rules import LEGIBLE_ZOOM
from tfstudio.gui.wire_item import WireItem
from tfstudio.presets import load_preset, preset_names



def _levels(name: str) -> list[tuple[str, ...]]:
    root = load_preset(name)
    return [()] + [(n.id,) for n in root.nodes.values() if n.is_group]


CASES = [(name, path) for name in preset_names() for path in _levels(name)]
pytestmark = pytest.mark.slow  # 51 windows, 0.3 s each


def _shown_whole(w) -> bool:
    rect = QRectF()
    for item in w.scene.items():
        if isinstance(item, NodeItem) or (isinstance(item, WireItem) and item.edge):
            rect = rect.united(item.drawn_rect())
    shown = w.view.mapToScene(w.view.viewport().rect()).boundingRect()
    return shown.contains(rect)


@pytest.mark.parametrize("name, path", CASES, ids=["/".join((n,) + p) for n, p in CASES])
def test_each_preset_and_group_is_whole_at_1366x768(make_window, qtbot, name, path):
    w = make_window(load_preset(name))
    w.resize(1366, 768)
    qtbot.wait(10)
    if path:
        w.scene.set_path(path)
    w.view.fit_to_view()
    assert w.view.zoom >= LEGIBLE_ZOOM - 1e-6
    assert _shown_whole(w), (name, path, round(w.view.zoom, 2))


def _problem_shown(w, problem) -> bool:
    """Whether the Problems panel shows ``problem``: as its brief line, or as a row of the
    list in view."""
    panel = w.problems
    if panel.brief:
        return panel.summary.isVisible() and html.escape(problem.message[:40]) in panel.summary.text()
    item = panel.tree.topLevelItem(0)
    row = panel.tree.visualItemRect(item)
    return (panel.tree.isVisible() and item.data(0, DIAG_ROLE) == problem
            and panel.tree.viewport().rect().contains(row.center()))


@pytest.mark.parametrize("name", preset_names())
def test_each_preset_stays_whole_at_1366x768_with_a_problem_showing(make_window, qtbot, name):
    """An edit that raises a problem (the head's input unplugged) opens the Problems panel:
    its list where the fitted picture leaves the height, else one line naming the problem;
    the picture stays whole at a legible zoom either way (tiny-t5, t5-small and
    tiny-transformer were cut by the panel's least height, 84 px)."""
    graph = load_preset(name)
    w = make_window(graph)
    w.resize(1366, 768)
    qtbot.wait(10)
    w.view.fit_to_view()
    into_head = next(e for e in graph.edges if graph.node(e.dst).type in HEAD_TYPES)
    w.session.execute(Disconnect((), into_head))
    w.session.refresh_report()
    qtbot.waitUntil(lambda: w.problems.has_problems)
    qtbot.wait(30)
    first = w.problems.diagnostics()[0]
    assert first.severity == "error"
    assert _problem_shown(w, first), (w.problems.brief, w.problems_dock.height())
    assert w.view.zoom >= LEGIBLE_ZOOM - 1e-6
    assert _shown_whole(w), (name, round(w.view.zoom, 2), w.problems_dock.height())


@pytest.mark.parametrize("name", ["tiny-induction", "tiny-window-lm"])
def test_the_model_page_fits_its_panel_at_1366x768(make_window, qtbot, name):
    """A description holding a command line (tiny-induction's corpus spec, an alphabet spelled
    out) widened the Details page past its panel: every line, the switches included, was cut
    on the right. Its long words break now, so nothing scrolls sideways."""
    w = make_window(load_preset(name))
    w.resize(1366, 768)
    qtbot.wait(30)
    page = w.inspector.widget()
    assert page.width() <= w.inspector.viewport().width() + 1, (page.width(),
                                                                 w.inspector.viewport().width())
