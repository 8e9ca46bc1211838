"""The comparison table's generation speed names the context it was timed at (generating from
a 1-token prompt up to it): the same model reads faster at 64 tokens than at 2,048."""
from __future__ import annotations

from pathlib import Path

from tfstudio.experiments.inference import InferenceCost
from tfstudio.experiments.report import columns, table_row
from tfstudio.experiments.results import RunResult, VariantResult


def variant(context: int, speed: float) -> VariantResult:
    run = RunResult(1, Path("."), 1000, [(10, 1.0)], [(10, 1.0)], {}, 1e3,
                    inference=InferenceCost(context, speed, 4096, 4096, "float32"))
    return VariantResult("base", "base", [run], 1.0, 0)


def test_generation_speed_names_the_context_it_was_timed_at():
    index = list(columns.__globals__["COLUMNS"]).index("generation tok/s (timed to context)")
    assert table_row(variant(64, 1234.4), None)[index] == "1,234 (to 64 tokens)"
    assert table_row(variant(2048, 98.0), None)[index] == "98 (to 2048 tokens)"
