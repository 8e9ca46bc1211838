"""A fitted canvas stays fitted when the panels around it change its size (the Problems
panel opening to its list under a new error), until the user zooms or pans."""
from __future__ import annotations

from PySide6.QtCore import QRectF

from tfstudio.gui.node_item import NodeItem
from tfstudio.presets import load_preset


def _everything_shown(w) -> bool:
    rect = QRectF()
    for item in w.scene.items():
        if isinstance(item, NodeItem):
            rect = rect.united(item.drawn_rect())
    shown = w.view.mapToScene(w.view.viewport().rect()).boundingRect()
    return shown.contains(rect)


def test_the_canvas_refits_when_the_problems_panel_grows(make_window, qtbot):
    from tfstudio.graph import SetParam
    w = make_window(load_preset("tiny-gpt"))
    w.resize(1920, 640)   # wide: the fit is set by the canvas's height
    qtbot.wait(50)
    w.view.fit_to_view()
    before, height = w.view.zoom, w.view.viewport().height()
    assert _everything_shown(w) and 0.8 < before < 1.0, before
    w.session.execute(SetParam(("layers",), "attn", "heads", 3))   # an error: Problems opens
    w.session.refresh_report()
    qtbot.waitUntil(lambda: w.view.viewport().height() < height - 40)
    qtbot.waitUntil(lambda: w.view.zoom < before - 0.01)            # refitted to the new size
    assert _everything_shown(w) and w.view.keeps_fit
    after = w.view.zoom
    w.view.fit_to_view()
    assert abs(w.view.zoom - after) < 1e-6                          # as a fit of the new size


def test_a_zoom_by_the_user_is_kept_through_a_resize(make_window, qtbot):
    w = make_window(load_preset("tiny-gpt"))
    w.view.fit_to_view()
    assert w.view.keeps_fit
    w.view.zoom_by(2)
    zoom = w.view.zoom
    assert not w.view.keeps_fit
    w.resize(1200, 700)
    qtbot.wait(20)
    assert abs(w.view.zoom - zoom) < 1e-6


def _whole_with_wires(w) -> bool:
    from tfstudio.gui.wire_item import WireItem
    rect = QRectF()
    for item in w.scene.items():
        if isinstance(item, NodeItem) or (isinstance(item, WireItem) and item.edge):
            rect = rect.united(item.drawn_rect())
    return w.view.mapToScene(w.view.viewport().rect()).boundingRect().contains(rect)


def test_the_problems_panel_opens_only_as_far_as_the_fitted_picture_allows(make_window, qtbot):
    """tiny-t5 at the legible zoom fills most of the canvas: a problem opens the panel short
    of its usual 150 px, so the encoder-decoder stays whole (at 150 its top row and decoder
    were cut); on a window with room to spare it opens to its usual height."""
    from tfstudio.graph import SetParam
    from tfstudio.gui.problem_lines import PROBLEMS_MIN_H, PROBLEMS_OPEN_H
    for height, whole_and_short in ((830, True), (1000, False)):
        w = make_window(load_preset("tiny-t5"))
        w.resize(1366, height)
        qtbot.wait(20)
        w.view.fit_to_view()
        assert _whole_with_wires(w)
        before = w.view.viewport().height()
        w.session.execute(SetParam(("decoder",), "attn", "heads", 3))
        w.session.refresh_report()
        qtbot.waitUntil(lambda: w.view.viewport().height() < before - 20)
        qtbot.wait(50)
        dock = w.problems_dock.height()
        assert PROBLEMS_MIN_H <= dock, dock
        assert (dock < PROBLEMS_OPEN_H - 5) == whole_and_short, dock
        assert _whole_with_wires(w)
        w.close()


def test_a_fitted_view_fits_again_when_a_splice_moves_blocks_out_of_it(make_window, qtbot):
    """Dropout spliced in line into tiny-gpt's embeddings row at 1366x768 moves Positional
    encoding to the right edge, its wire past it: the fitted view fits again; a view the
    user zoomed stays as it was."""
    from tfstudio.graph import Edge
    for fitted in (True, False):
        w = make_window(load_preset("tiny-gpt"))
        w.resize(1366, 768)
        qtbot.wait(20)
        w.view.fit_to_view()
        if not fitted:
            w.view.set_zoom(0.9)
        transform = w.view.transform()
        wire = w.scene.wire_items[Edge("embed", "y", "pos", "x")]
        w.scene.add_block("dropout", wire.mapToScene(wire._path.pointAtPercent(0.5)),
                          splice=True)
        qtbot.wait(30)
        assert _whole_with_wires(w) == fitted
        assert (w.view.transform() == transform) != fitted
        w.close()


def test_with_no_height_to_spare_the_problems_panel_is_one_line_naming_the_problem(make_window,
                                                                                    qtbot):
    """tiny-t5 at 1366x768 leaves the canvas under 84 px to spare: a problem keeps the panel
    to its one line, which names the problem and links to the list; the encoder-decoder
    stays whole (the panel at 84 px cut its top row and decoder). "List all" opens the list
    at its usual height; with the problem gone the line says so."""
    import html
    from tfstudio.graph import SetParam
    from tfstudio.graph.edit_rules import fix_text
    from tfstudio.gui.problem_lines import PROBLEMS_OPEN_H
    w = make_window(load_preset("tiny-t5"))
    w.resize(1366, 768)
    qtbot.wait(20)
    w.view.fit_to_view()
    before = (w.view.viewport().height(), w.problems_dock.height())
    w.session.execute(SetParam(("decoder",), "attn", "heads", 3))
    w.session.refresh_report()
    qtbot.waitUntil(lambda: w.problems.has_problems)
    qtbot.wait(50)
    first = w.problems.diagnostics()[0]
    assert w.problems.brief and w.problems.tree.isHidden()
    assert html.escape(first.message[:40]) in w.problems.summary.text()
    assert (w.view.viewport().height(), w.problems_dock.height()) == before
    assert _whole_with_wires(w)
    w.problems.summary.linkActivated.emit("list")              # what a click on the link does
    qtbot.waitUntil(lambda: w.problems_dock.height() >= PROBLEMS_OPEN_H - 5)
    assert not w.problems.brief and w.problems.tree.isVisible()
    w.session.undo()
    w.session.refresh_report()
    qtbot.waitUntil(lambda: not w.problems.has_problems)
    assert "No problems" in w.problems.summary.text()
    w.session.redo()                                           # the problem again: one line
    w.session.refresh_report()
    qtbot.waitUntil(lambda: w.problems.has_problems)
    assert w.problems.brief and fix_text(first) in w.problems.summary.text()
    w.problems.summary.linkActivated.emit("fix")               # its fix, from the line
    w.session.refresh_report()
    qtbot.waitUntil(lambda: not w.problems.has_problems)
    assert w.session.root.node("decoder").subgraph.node("attn").param("heads") != 3
