"""What the Compare view writes (gui/training/compare_lines.py, no Qt): a lesson's line, the verdict, the table's column names and the runs' names in Runs."""
from __future__ import annotations

from pathlib import Path

from tfstudio.gui.training.compare_job import RunEnd, Shown
from tfstudio.gui.training.compare_lines import (done_line, finished_runs, lesson_html,
                                                 stopped_runs, two_lines,
                                                 verdict_html)


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
