"""The sampling lesson walks the whole grid (temperature x top-k x top-p) and shows every
setting on its page, each measure as its mean over seeds with the spread."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

from tfstudio.experiments.course.sampling import (DEFAULT_GRID, TEMPERATURES, TOP_KS, TOP_PS,
                                                  Setting)
from tfstudio.experiments.lessons import LESSONS
from tfstudio.experiments.lessons import sampling as lesson
from tfstudio.experiments.report import lesson_tables, markdown
from tfstudio.experiments.results import Comparison, RunResult, VariantResult
from tfstudio.experiments.runner import Plan


def test_the_grid_holds_every_temperature_with_every_filter_and_greedy():
    combos = {(s.temperature, s.top_k, s.top_p) for s in DEFAULT_GRID}
    assert combos == {(0.0, 0, 1.0)} | set(itertools.product(TEMPERATURES, TOP_KS, TOP_PS))
    assert len(TEMPERATURES) >= 3 and len(TOP_KS) >= 2 and len(TOP_PS) >= 2
    labels = {s.label for s in DEFAULT_GRID}   # the settings the verdict reads are in it
    assert {lesson.LOW.label, lesson.MID.label, lesson.HIGH.label, lesson.TOP_K.label,
            lesson.TOP_P.label} <= labels


def fake_row(setting: Setting, rep: float, kept=(3, 9)) -> dict:
    return {"setting": setting.label, "temperature": setting.temperature,
            "top_k": setting.top_k, "top_p": setting.top_p, "distinct_1": 0.5,
            "distinct_2": 0.8, "repetition": [rep, rep], "known": [0.9], "log_prob": [-1.0],
            "kept_min": kept[0], "kept_max": kept[1], "texts": []}


def test_each_setting_is_a_row_with_the_mean_and_spread_over_seeds():
    grid = [Setting(0.0), Setting(1.0, top_k=5, top_p=0.9)]
    tables = [{s.label: fake_row(s, rep, kept) for s in grid}
              for rep, kept in ((0.1, (1, 4)), (0.3, (2, 7)))]
    header, rows = lesson.grid_table(tables)
    assert header[:3] == ["temperature", "top-k", "top-p"]
    assert rows[0][:3] == ["0 (greedy)", "off", "off"]
    assert rows[1][:3] == ["1", "5", "0.9"]
    assert rows[1][header.index("repeated 4-grams")] == "0.200 ± 0.141"
    assert rows[1][header.index("tokens kept per step")] == "1 to 7"


def test_the_lessons_page_shows_the_grid(tmp_path):
    runs = []
    for seed in (1, 2):
        folder = tmp_path / str(seed)
        folder.mkdir()
        (folder / "sampling.json").write_text(json.dumps(
            [fake_row(s, 0.1 * seed) for s in DEFAULT_GRID]))
        runs.append(RunResult(seed, folder, 1000, [(10, 1.0)], [(10, 1.0)], {}, 1e3))
    plan = Plan("tiny-gpt", [], [1, 2], LESSONS["sampling"].config(), [], [], "sampling")
    c = Comparison(Path(tmp_path), plan, [VariantResult("base", "base", runs, 1.0, 0)], {}, None)
    (title, header, rows), = lesson_tables(c)
    assert len(rows) == len(DEFAULT_GRID) and f"{len(DEFAULT_GRID)} settings" in title
    page = markdown(c, {}, "Lesson", [])
    assert "## The whole grid" in page and "| 2 | 40 | 0.5 |" in page
