"""What the Compare view writes (gui/training/compare_lines.py, no Qt): a lesson's line, the
verdict, the table's column names and the runs' names in Runs; what its form asks."""
from __future__ import annotations

from pathlib import Path

from tfstudio.gui.report_plots import FLOOR, drawn_points, grad_norm_layers
from tfstudio.gui.training.compare_job import RunEnd, Shown
import pytest

from tfstudio.gui.training.compare_lines import (NO_RUN_FINISHED, VERDICT_HINT, done_line,
                                                 eval_every, eval_lengths,
                                                 finished_runs, intro_html,
                                                 legend_name, lengths_field, lesson_html,
                                                 log_floored, loss_hint, run_name,
                                                 seed_entries, started_line, steps_done,
                                                 stopped_runs, table_cells, two_lines,
                                                 varies_of, verdict_html)


def shown(summary: list[str], failures=(), page=Path("/c/report.html")) -> Shown:
    return Shown(Path("/c"), "Lesson: norms", summary, ["variant", "val loss"],
                 [["pre", "1.2"], ["post", "1.5"]], {},
                 {"pre": [(1, Path("/c/pre-1")), (2, Path("/c/pre-2"))]}, page, list(failures))


def test_the_verdicts_word_is_large_its_tally_after_it_and_the_checks_a_list():
    said = verdict_html(shown(["Claim: pre-norm trains lower", "Verdict: holds (3 of 3 seeds)",
                               "pre 1.2 ± 0.1", "post 1.5 ± 0.2"], ["post seed 2: nan"]))
    assert said == ("<h3>Lesson: norms</h3><p><i>Claim: pre-norm trains lower</i></p>"
                    "<p><b style='font-size:large'>Verdict: holds</b> (3 of 3 seeds)</p>"
                    "<ul><li>pre 1.2 ± 0.1</li><li>post 1.5 ± 0.2</li></ul>"
                    "<p><b>Failed:</b> post seed 2: nan</p><p>Page: /c/report.html</p>")
    own = verdict_html(shown([], page=None))   # no lesson: no claim to judge, and why
    assert own.startswith("<h3>Lesson: norms</h3><p>2 variant(s) compared; a comparison of "
                          "your own has no claim to judge")
    assert "Page" not in own and "<ul>" not in own
    assert "&lt;b&gt;" in verdict_html(shown(["Claim: <b> is escaped"]))
    judged = verdict_html(shown(["Claim: c", "Verdict: fails (1 of 3 seeds)"]))  # no checks
    assert "variant(s) compared" not in judged and "<ul>" not in judged


def test_a_long_column_name_breaks_at_the_space_nearest_its_middle():
    assert two_lines("val loss") == "val loss"                     # short: one line
    assert two_lines("validation_loss_final") == "validation_loss_final"  # no space to break
    assert two_lines("answer accuracy at end") == "answer accuracy\nat end"
    assert two_lines("KV-cache bytes at context") == "KV-cache bytes\nat context"


def test_runs_join_runs_named_by_variant_and_seed_and_where_a_stopped_one_stopped():
    assert finished_runs(shown([])) == [("/c/pre-1", "pre seed 1"), ("/c/pre-2", "pre seed 2")]
    assert done_line(shown([], ["x"])) == "Done: 2 variant(s); page /c/report.html; 1 run(s) failed"
    assert done_line(shown([])) == "Done: 2 variant(s); page /c/report.html"
    ends = [RunEnd("pre", 1, Path("/c/pre-1"), "completed", 60, 60),
            RunEnd("pre", 2, Path("/c/pre-2"), "stopped", 31, 60),
            RunEnd("post", 1, Path("/c/post-1"), "stopped", 0, 60),       # no step to show
            RunEnd("post", 2, Path("/c/post-2"), "failed", 12, 60)]
    assert stopped_runs(ends) == [("/c/pre-1", "pre seed 1"),
                                  ("/c/pre-2", "pre seed 2 (stopped at step 31)")]


def test_a_lessons_line_names_its_base_with_its_edits_what_it_varies_and_its_claim():
    assert lesson_html("Lesson: norms", "tiny-gpt", [("layers", 2)],
                       [("norm", ["pre", "post"]), ("positions", ["rope"])],
                       "pre-norm trains lower") == (
        "<b>Lesson: norms</b><br>Base tiny-gpt (layers=2), varying norm = pre, post; "
        "positions = rope.<br><i>Claim: pre-norm trains lower</i>")


def test_before_the_verdict_the_page_holds_the_lessons_claim_escaped_then_the_hint():
    assert intro_html("") == f"<p><i>{VERDICT_HINT}</i></p>"       # your own comparison
    assert intro_html("Pre-norm trains <faster>") == (
        f"<p>Pre-norm trains &lt;faster&gt;</p><p><i>{VERDICT_HINT}</i></p>")


def test_the_progress_counts_each_runs_last_logged_step():
    assert steps_done({}) == 0
    assert steps_done({("pre", 1): [(1, 3.0), (5, 2.0)], ("post", 1): [(2, 3.1)]}) == 7


def test_kv_cache_points_are_drawn_only_when_the_variants_caches_differ():
    mha = {"name": "mha", "params": 1000, "kv_bytes": 4096, "loss": 2.0, "spread": 0.1}
    gqa = {**mha, "name": "gqa", "kv_bytes": 1024}
    same = {**mha, "name": "pre"}
    unmeasured = {**mha, "name": "x", "params": 0}
    assert drawn_points([mha, gqa], "kv_bytes") == [mha, gqa]
    assert drawn_points([mha, same], "kv_bytes") is None            # one column says nothing
    assert drawn_points([mha, same, unmeasured], "params") == [mha, same]
    assert drawn_points([unmeasured], "params") == []


def test_layers_gradient_norms_are_drawn_per_layer_with_nothing_below_the_floor():
    norms = {"pre": {"layers.1": [(1, 0.5)], "embed": [(1, 2.0)]},
             "post": {"layers.0": [(1, 0.4)]}}
    assert grad_norm_layers(norms) == ["layers.0", "layers.1"]       # not the embedding
    assert grad_norm_layers({"pre": {"embed": []}}) == []
    # in layer order, as the report's picture colours them: layers.2 before layers.10
    assert grad_norm_layers({"pre": {f"layers.{i}": [] for i in (10, 2, 1)}}) == [
        "layers.1", "layers.2", "layers.10"]
    assert log_floored([0.5, 0.0, 1e-9, float("nan"), float("inf")]) == [
        0.5, FLOOR, FLOOR, FLOOR, FLOOR]


def test_each_variant_is_in_the_live_legend_once_by_its_first_seed():
    assert legend_name("pre", {}) == "pre"
    drawn = {("pre", 1): None}
    assert legend_name("pre", drawn) is None                # its second seed
    assert legend_name("post", drawn) == "post"             # another variant's first


def test_the_reports_loss_plot_says_so_when_no_run_finished():
    assert loss_hint({}) == NO_RUN_FINISHED
    assert loss_hint({"pre": {"train": [(1, 3.0)], "val": []}}) == ""


def test_the_seed_box_offers_the_picked_variants_finished_runs_by_their_names_in_runs():
    done = shown(["claim"])
    done.runs = {"pre": [(1, Path("/c/pre-1")), (2, Path("/c/pre-2"))], "post": []}
    assert seed_entries(done, "pre") == [("1", ("pre", 1, "/c/pre-1")),
                                         ("2", ("pre", 2, "/c/pre-2"))]
    assert seed_entries(done, "post") == []                 # none finished: Open is off
    assert seed_entries(done, "sandwich") == []
    assert seed_entries(None, "pre") == []                  # nothing compared yet
    assert run_name("pre", 2) == "pre seed 2"
    assert finished_runs(done) == [("/c/pre-1", "pre seed 1"), ("/c/pre-2", "pre seed 2")]


def test_the_ticked_values_cross_each_switch_once_with_its_values_in_order():
    ticked = [("norm", "pre"), ("norm", "post"), ("attention", "gqa"), ("norm", "sandwich")]
    assert varies_of(ticked) == [("norm", ["pre", "post", "sandwich"]), ("attention", ["gqa"])]
    assert varies_of([]) == []                      # nothing ticked: Run asks for a value


def test_eval_lengths_are_asked_of_a_text_corpus_of_your_own_only():
    text_tip = "loss measured by position up to each length"
    assert lengths_field("sample:small", None) == (True, text_tip)
    assert lengths_field("sample:small", "norms") == (False, text_tip)   # the lesson's own
    assert lengths_field("task:reverse", None) == \
        (False, "a task is scored on its answers: no loss by position")
    assert eval_lengths("64, 128,,256 ", True) == [64, 128, 256]
    assert eval_lengths("64,128", False) == [] and eval_lengths("", True) == []
    with pytest.raises(ValueError):
        eval_lengths("64,long", True)


def test_a_comparison_evaluates_ten_times_and_says_how_many_runs_it_trains():
    assert [eval_every(steps) for steps in (400, 25, 9, 1)] == [40, 2, 1, 1]
    assert started_line(3, 2, Path("/c/20261207-1400-compare")) == \
        "Training 3 variant(s) x 2 seed(s) in /c/20261207-1400-compare"


def test_each_cell_of_the_table_names_its_column_in_full_and_its_value():
    assert table_cells(shown(["Verdict: holds"])) == [
        [("pre", "variant: pre"), ("1.2", "val loss: 1.2")],
        [("post", "variant: post"), ("1.5", "val loss: 1.5")]]
