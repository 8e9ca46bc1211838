"""What a lesson and the comparison report say when the results are partial or spread: which
variants finished, why a fit failed, a setting left unsampled, the spread beside each loss, and
each timing the decode sentence quotes; an invalid variant refused before anything is written.
Made-up results, no training. Written from survivors of
the experiments mutation sample (issue 29)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfstudio.experiments import report
from tfstudio.experiments.compare import plan_runs
from tfstudio.experiments.lessons import FAILS, LESSONS
from tfstudio.experiments.lessons.attention import decode_check
from tfstudio.experiments.results import Comparison, RunResult, VariantResult
from tfstudio.experiments.runner import Plan
from tfstudio.presets import load_preset

BASELINES = {"unigram": 3.0, "bigram": 2.0}


def comparison(lesson: str, key: str, losses: dict[str, list[float]], *, params=None,
               dirs=None) -> Comparison:
    """One variant per value of ``key``, one run per loss (seeds 1, 2, ...)."""
    variants = []
    for value, values in losses.items():
        runs = [RunResult(seed, Path((dirs or {}).get(seed, ".")), (params or {}).get(value, 1000),
                          [(10, loss)], [(10, loss)], {}, 1000.0)
                for seed, loss in enumerate(values, start=1)]
        variants.append(VariantResult(f"{key}={value}", f"{key}-{value}", runs, 1.0, 0))
    plan = Plan("tiny-gpt", [(key, list(losses))], [1, 2, 3], LESSONS[lesson].config(), [], [],
                lesson)
    return Comparison(Path("."), plan, variants, BASELINES, None)


def test_scale_names_the_widths_that_finished_when_too_few_did():
    (check,) = LESSONS["scale"].judge(comparison("scale", "width", {"32": [2.0], "64": [1.8]}))
    assert check.outcome == FAILS
    assert check.sentence == "Only 32, 64 finished; a fit needs three."


def test_scale_says_why_no_power_law_fits():
    # every width with the same parameter count: no slope can be fitted
    c = comparison("scale", "width", {w: [2.0, 2.1] for w in ("32", "48", "64")},
                   params={w: 1000 for w in ("32", "48", "64")})
    (check,) = LESSONS["scale"].judge(c)
    assert check.outcome == FAILS and check.sentence.startswith("No fit: ")
    assert len(check.sentence) > len("No fit: .")


def test_activations_names_the_variants_that_finished_when_some_are_missing():
    (check,) = LESSONS["activations"].judge(
        comparison("activations", "ffn_activation", {"relu": [1.2], "gelu": [1.3]}))
    assert check.outcome == FAILS
    assert check.claim == "ReLU, GELU, SwiGLU and GEGLU were trained"
    assert check.sentence == "Only gelu, relu finished."


def test_sampling_names_a_setting_left_unsampled(tmp_path):
    rows = [{"setting": label, "repetition": [0.1], "known": [0.5], "kept_min": 40,
             "kept_max": 40} for label in ("T=0.5", "T=1", "T=2", "T=1, top-k 40")]
    (tmp_path / "sampling.json").write_text(json.dumps(rows))
    (tmp_path / "repetition.json").write_text(json.dumps(
        [{"setting": label, "char_repetition": [0.1], "texts": ["x" * 600]}
         for label in ("T=0", "T=0.5", "T=1")]))
    (check,) = LESSONS["sampling"].judge(comparison("sampling", "x", {"a": [1.0]},
                                                    dirs={1: tmp_path}))
    assert check.outcome == FAILS and check.sentence == "Missing: T=1, top-p 0.9, T=1.5."


def test_the_report_shows_the_spread_over_seeds_beside_each_loss():
    c = comparison("norm", "norm", {"pre": [1.0, 1.1, 1.2], "post": [3.0]})
    text = report.markdown(c, {})
    assert "| 1.100 ± 0.100 |" in text            # mean ± sample standard deviation
    assert "| 3.000 |" in text and "3.000 ±" not in text   # one seed: no spread


def test_the_decode_sentence_quotes_every_kind_at_every_context():
    rows = [{"kind": k, "context": ctx, "cache": True, "ms": [ms + ctx / 64, ms + ctx / 64]}
            for k, ms in (("mha", 30.0), ("gqa", 20.0), ("mqa", 10.0)) for ctx in (64, 512)]
    check = decode_check({"d_model": 64, "layers": 2, "heads": 4, "dtype": "float32",
                          "threads": 1, "rows": rows})
    assert ("MHA 31.0 ± 0.0 / 38.0 ± 0.0, GQA 21.0 ± 0.0 / 28.0 ± 0.0, "
            "MQA 11.0 ± 0.0 / 18.0 ± 0.0.") in check.sentence


def test_a_lesson_trains_its_first_seed_unless_told_another():
    lesson = LESSONS["norm"]
    assert lesson.config().seed == lesson.seeds[0] != lesson.seeds[1]
    assert lesson.config(seed=7).seed == 7


def test_a_comparison_with_an_invalid_variant_is_refused_before_anything_is_written(tmp_path):
    graph = load_preset("tiny-gpt")
    for _, node in graph.walk():
        if node.type == "attention":
            node.params["heads"] = 3                 # 64 does not split into 3 heads
    with pytest.raises(ValueError, match="variant base is not a valid graph: d_model 64"):
        plan_runs("x", graph, [], [1], LESSONS["norm"].config(), [], tmp_path / "out")
    assert not (tmp_path / "out").exists()
