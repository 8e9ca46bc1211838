"""The compiler bench's written verdict follows its measured ratios."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_compiler import verdict  # noqa: E402


def test_the_compiler_bench_names_the_rows_over_its_target_and_flips_with_them():
    within = verdict({"tiny-gpt (d=64)": 1.004, "LLaMA shape (d=128)": 0.998}, 1.001)
    assert within == ("Overall (geometric mean of compiled / hand): 1.001, within 1.05; "
                      "every row meets <= 1.01.")
    over = verdict({"tiny-gpt (d=64)": 1.022, "LLaMA shape (d=128)": 0.998}, 1.010)
    assert "over 1.01: tiny-gpt (1.022);" in over and "LLaMA" not in over
    assert "1.060, over 1.05" in verdict({"tiny-gpt (d=64)": 1.06}, 1.06)
