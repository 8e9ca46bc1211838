"""Plots like the best viewers: a colour scale on every heatmap, token labels on the all-heads
grid, heads that share K/V marked, legends outside the data, a smoothed throughput, a
Positions scheme control only when there is a choice, and an Export menu whose every entry
saves its file."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF

from tfstudio.gui.training.attention_view import AttentionView
from tfstudio.gui.training.colours import colour_ramp
from tfstudio.gui.training.curve_math import moving_average
from tfstudio.gui.training.curves_view import CurvesView
from tfstudio.gui.training.heatmap import Heatmap
from tfstudio.gui.training.positions_view import PositionsView
from tfstudio.gui.training.series import RunSeries
from tfstudio.presets import load_preset


def causal_snapshot(heads: int, n: int, key: str = "layers.0.attn") -> dict:
    rng = np.random.default_rng(0)
    allowed = np.tril(np.ones((n, n), bool))
    w = np.where(allowed, rng.random((heads, n, n)), 0.0)
    w /= w.sum(-1, keepdims=True)
    tokens = [chr(ord("a") + i % 26) for i in range(n)]
    return {"step": 10, "tokens": {"tokens": tokens},
            "attention": {key: {"weights": w, "allowed": allowed, "query_role": "tokens",
                                "key_role": "tokens", "cross": False}}}


def test_heatmaps_draw_a_colour_scale_with_its_range(qtbot):
    heatmap = Heatmap()
    qtbot.addWidget(heatmap)
    heatmap.resize(400, 300)
    heatmap.show()
    heatmap.set_data(np.array([[0.0, 0.5], [0.25, 1.0]]), ["a", "b"], ["a", "b"])
    image = heatmap.grab().toImage()
    area, _, _ = heatmap._layout(QRectF(heatmap.rect()))
    top = image.pixelColor(int(area.right() + 13), int(area.top() + 2))  # the bar's top end
    want = colour_ramp(np.array([1.0]))[0]
    assert abs(top.red() - int(want[0])) <= 8 and abs(top.blue() - int(want[2])) <= 8
    assert heatmap.value_range == (0.0, 1.0)


def test_the_all_heads_grid_labels_tokens_and_marks_heads_that_share_kv(qtbot):
    view = AttentionView()
    qtbot.addWidget(view)
    view.resize(1100, 900)
    view.show()
    view.set_graph(load_preset("tiny-llama"))  # 4 query heads, 2 K/V heads
    view.show_snapshot(causal_snapshot(4, 12))
    view.head.setCurrentIndex(view.head.findData("grid"))
    qtbot.wait(50)
    titles = [m.title for m in view.grid.maps[:4]]
    assert titles == ["head 0 · K/V 0", "head 1 · K/V 0", "head 2 · K/V 1", "head 3 · K/V 1"]
    assert "GQA: 4 query heads share 2 K/V heads, 2 per group" in view.info.text()
    assert all(m.label_font_px() >= 9 for m in view.grid.maps[:4])  # token labels drawn
    assert view.grid.maps[0].rows[:3] == ["a", "b", "c"]

    view.set_graph(load_preset("tiny-gpt"))  # plain multi-head: nothing shared, nothing said
    view.show_snapshot(causal_snapshot(4, 12))
    assert view.grid.maps[1].title == "head 1" and "K/V" not in view.info.text()


def test_a_small_map_labels_every_kth_token_at_a_readable_size(qtbot):
    """44 tokens in a 260 px map (one head of the all-heads grid): cells of about 4 px, too
    small for a readable label each, so every k-th token is labelled at 9 px, k cells apart
    being at least one line of text; the hovered row is always labelled."""
    from PySide6.QtGui import QFontMetricsF

    from tfstudio.gui.training.heatmap import READABLE_PX, _font

    heatmap = Heatmap(min_size=90)
    qtbot.addWidget(heatmap)
    heatmap.resize(260, 260)
    heatmap.show()
    tokens = [f"t{i}" for i in range(44)]
    heatmap.set_data(np.tril(np.ones((44, 44))) / np.arange(1, 45)[:, None], tokens, tokens,
                     np.tril(np.ones((44, 44), dtype=bool)))
    area, cw, ch = heatmap._layout(QRectF(heatmap.rect()))
    line = QFontMetricsF(_font(READABLE_PX)).height()
    assert ch < line  # one label per row would overlap its neighbours
    assert heatmap.label_font_px() == READABLE_PX
    rows = heatmap.labelled_rows()
    k = rows[1] - rows[0]
    assert rows == list(range(0, 44, k)) and k * min(cw, ch) >= line and k < 44 / 2
    heatmap._set_hover(5)
    rows = heatmap.labelled_rows()
    assert 5 in rows and all(abs(r - 5) >= k for r in rows if r != 5)
    spacing = [b - a for a, b in zip(rows, rows[1:]) if 5 not in (a, b)]
    assert min(spacing) * ch >= line


def test_curve_legends_sit_outside_every_data_area(qtbot):
    view = CurvesView()
    qtbot.addWidget(view)
    view.resize(1100, 650)
    view.show()
    series = RunSeries("run")
    for step in range(1, 30):
        series.steps.append(step)
        for name in ("loss", "lr", "grad_norm", "tokens_per_s", "elapsed_s"):
            getattr(series, name).append(1.0 + step)
        for layer in ("embed", "layers.0", "layers.1", "head"):
            series.layer_grad_norms.setdefault(layer, []).append(0.5)
    view.add_series(series)
    qtbot.wait(50)
    boxes = [p.getViewBox().sceneBoundingRect() for p in view.plot_items().values()]
    for legend in (view.legend, view.layer_legend):
        assert legend.items, "the legend lists its curves"
        rect = legend.sceneBoundingRect()
        assert not any(rect.intersects(box) for box in boxes)


def test_throughput_is_a_moving_average():
    values = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    # by hand: the mean of the last (up to) 3 values at each point
    np.testing.assert_allclose(moving_average(values, 3), [10, 15, 20, 30, 40])
    noisy = np.tile([100.0, 300.0], 50)
    assert np.ptp(moving_average(noisy, 20)[20:]) < np.ptp(noisy) / 10


def test_the_scheme_control_shows_only_when_there_is_a_choice(qtbot):
    view = PositionsView()
    qtbot.addWidget(view)
    view.show()
    table = {"table": np.zeros((8, 4)), "similarity": np.zeros((8, 8))}
    view.show_positions({"learned": table}, "one scheme")
    assert not view.scheme.isVisible()
    view.show_positions({"learned": table, "sinusoidal": table}, "two")
    assert view.scheme.isVisible() and view.scheme.count() == 2
    view.scheme.setCurrentText("sinusoidal")
    assert "sinusoidal" in view.stack.currentWidget().table.title
    rope = view.pages["rope"].freq_plot
    assert "log scale" in rope.getAxis("left").labelText


def test_a_learned_tables_waveforms_keep_a_round_range_until_the_values_pass_it(qtbot):
    """The y range is +-(1, 2 or 5 x 10^k) at or above the largest value drawn, so a table
    that trains moves the curves, not the axis, until a value passes the bound (the bound's
    rule: test_positions_math.py)."""
    view = PositionsView()
    qtbot.addWidget(view)
    view.resize(900, 500)
    view.show()
    rng = np.random.default_rng(0)
    page = view.pages["table"]

    def show(scale, step):
        table = rng.standard_normal((32, 16))
        table *= scale / np.abs(table).max(axis=0)  # every column's largest |value|: `scale`
        view.show_positions({"learned": {"table": table, "similarity": table @ table.T}},
                            f"step {step}")
        low, high = page.wave_plot.getViewBox().viewRange()[1]
        return round(high - low, 6)

    first = show(0.03, 10)
    assert first == round(2 * 0.05 * 1.04, 6)            # +-0.05, pyqtgraph's 2% padding
    assert show(0.045, 20) == first                      # inside the bound: the axis stays
    assert show(0.08, 30) == round(2 * 0.1 * 1.04, 6)    # past it: the next round bound


def test_the_curves_hints_wrap_inside_their_plots_at_the_laptop_width(qtbot):
    """The curves view is ~1,030 px wide in the Train workspace at 1366x768, so each plot is
    ~320 px: a hint on one line ran past both edges ("racy: this corpus is text...")."""
    view = CurvesView()
    qtbot.addWidget(view)
    view.resize(1034, 556)
    view.show()
    series = RunSeries("tiny-gpt · sample")
    series.is_task = False
    series.steps, series.loss, series.lr = [1, 2], [3.0, 2.9], [1e-3, 1e-3]
    series.grad_norm, series.tokens_per_s, series.elapsed_s = [1.0, 1.0], [1e4, 1e4], [0.1, 0.2]
    for shown in (None, series):  # the empty state, then a text corpus's accuracy
        if shown is not None:
            view.add_series(shown)
        qtbot.wait(50)
        visible = {n: h for n, h in view.hints.items() if h.isVisible()}
        assert visible and (shown is None or "acc" in visible)
        for name, hint in visible.items():
            box = view.plot_items()[name].getViewBox()
            drawn = hint.mapRectToItem(box, hint.textItem.mapRectToParent(
                hint.textItem.boundingRect()))
            assert box.rect().contains(drawn), (name, hint.toPlainText(), drawn, box.rect())


def test_every_entry_of_the_export_menu_saves_its_file(qtbot, tmp_path, monkeypatch):
    import xml.etree.ElementTree as ET

    from tfstudio.gui.training import picture_export
    view = CurvesView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.add_series(RunSeries("tiny-gpt · 08:00:00", steps=[1, 2], loss=[3.0, 2.0],
                              lr=[1e-3] * 2, grad_norm=[1.0, 0.9], tokens_per_s=[100.0] * 2,
                              elapsed_s=[0.1, 0.2], total_steps=2))
    monkeypatch.setattr(picture_export, "SAVE_DIALOG",
                        [lambda parent, title, kinds, ext: str(tmp_path / f"curves{ext}")])
    for action in view.export.menu().actions():
        action.trigger()
    assert (tmp_path / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ET.parse(tmp_path / "curves.svg").getroot().tag.endswith("svg")
    assert (tmp_path / "curves.csv").read_text().splitlines()[0].startswith("run,step,loss")



def test_a_plots_right_click_menu_is_built_when_first_opened_and_offers_pyqtgraphs_entries(
        make_panel):
    """Every plot of the Train workspace: no menu is built with the panel (pyqtgraph's cost 3
    of a plot's 8 ms), and the menu the first right-click opens is pyqtgraph's own, entry for
    entry, with the box's axes linkable to the other plots as in any view box."""
    import pyqtgraph as pg
    panel = make_panel()
    boxes = [item for view in panel.findChildren(pg.GraphicsView)
             for item in view.scene().items() if isinstance(item, pg.ViewBox)]
    assert len(boxes) >= 10, len(boxes)
    assert all(box.menu is None and box.menuEnabled() for box in boxes)
    eager = pg.ViewBox(name="eager")  # pyqtgraph's own: the menu built with the box
    want = [a.text() for a in eager.menu.actions()]
    for box in boxes:
        menu = box.getMenu(None)
        assert menu is not None and [a.text() for a in menu.actions()] == want
        assert box.getMenu(None) is menu  # built once
        assert [a.text() for a in box.getContextMenus(None)] == want
        # the "link axis" lists name the other boxes that have names, as pyqtgraph's do
        links = menu.ctrl[0].linkCombo
        assert "eager" in [links.itemText(i) for i in range(links.count())]
