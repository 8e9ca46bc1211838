"""What the Problems panel says (gui/problem_lines.py), checked on reports without a
QApplication: the line flips from "no problems" to the counts, and brief, to the first
problem with its fix."""
from dataclasses import replace

from tfstudio.graph.edit_rules import fix_edit
from tfstudio.graph.validate import Diagnostic
from tfstudio.gui.graph_report import GraphReport, report_on_graph
from tfstudio.gui.problem_lines import (ANALYSIS_FAILED, BRIEF_CHARS, NO_PROBLEMS,
                                        PROBLEMS_MIN_H, PROBLEMS_OPEN_H, counts_words, fix_tip,
                                        has_problems, no_fix_line, open_height, opens_brief,
                                        ordered, row_words, stays_brief, summary)
from tfstudio.presets import load_preset


def _report(*diagnostics, failures=()):
    return GraphReport(diagnostics=list(diagnostics), failures=list(failures))


def test_a_graph_without_problems_says_it_compiles_and_one_with_says_how_many():
    graph = load_preset("tiny-gpt")
    assert summary(report_on_graph(graph), brief=False).text == NO_PROBLEMS
    graph.node("layers").subgraph.node("attn").params["heads"] = 3  # 64 / 3 is not whole
    broken = report_on_graph(graph)
    assert summary(broken, brief=False).text == (
        f"{broken.errors} errors, {broken.warnings} warnings. Click one to go to its block.")
    assert summary(_report(failures=["cost model failed: x"]), brief=False).text.startswith(
        "0 errors, 0 warnings.")  # an analysis that failed is a problem too


def test_errors_are_listed_before_warnings_whatever_their_place():
    warning = Diagnostic("warning", "w", "h", "a_block")
    error = Diagnostic("error", "e", "h", "z_block")
    assert ordered(_report(warning, error)) == [error, warning]


def test_the_brief_line_names_the_first_problem_cut_to_fit_with_its_fix_and_the_list():
    long = Diagnostic("error", "x" * (BRIEF_CHARS + 20), "use 4", "attn", ("layers",),
                      fix=("heads", 4))
    line = summary(_report(Diagnostic("warning", "w <b>", "h", "n"), long), brief=True)
    assert line.text.startswith(f"1 error, 1 warning: {'x' * (BRIEF_CHARS - 1)}… (layers/attn)")
    assert line.text.endswith("<a href='fix'>Set heads to 4</a> · <a href='list'>List all</a>")
    assert line.tooltip == f"error: {long.message}\nuse 4"
    short = summary(_report(Diagnostic("warning", "w <b>", "h", "n")), brief=True)
    assert short.text == "0 errors, 1 warning: w &lt;b&gt; (n) — <a href='list'>List all</a>"


def test_the_counts_say_one_or_many():
    assert counts_words(1, 0) == "1 error, 0 warnings"
    assert counts_words(2, 1) == "2 errors, 1 warning"


def test_the_panel_opens_as_far_as_the_fitted_picture_allows_else_one_line():
    assert open_height(False, 30, 0) == PROBLEMS_OPEN_H            # a zoomed view: its height
    assert open_height(True, 30, 500) == PROBLEMS_OPEN_H           # room to spare
    short = open_height(True, 30, 90)                              # room for 120 px only
    assert short == 120 and not opens_brief(short)
    tight = open_height(True, 30, 40)
    assert tight == 70 and opens_brief(tight) and tight < PROBLEMS_MIN_H


def test_a_fix_buttons_tooltip_says_what_it_sets_where_in_one_step():
    gpt = load_preset("tiny-gpt")
    gpt.node("layers").subgraph.node("attn").params.update(heads=3, kv_heads=3)
    (d,) = [d for d in report_on_graph(gpt).diagnostics if d.fix is not None]
    assert fix_tip(d) == f"Set heads to 4 in {d.where} (one undo step)"
    assert d.where and d.where in fix_tip(d)


def test_the_panel_goes_to_one_line_on_the_first_problem_only_where_it_cannot_open():
    roomy, cramped = (lambda: PROBLEMS_OPEN_H), (lambda: PROBLEMS_MIN_H - 1)
    assert not stays_brief(True, True, False, roomy)            # the list opens
    assert stays_brief(True, True, False, cramped)              # one line naming it
    assert stays_brief(True, None, False, cramped)              # never shown yet: the same
    assert not stays_brief(False, True, True, cramped)          # nothing to list: no brief line


def test_the_panels_choice_holds_until_the_problems_are_gone():
    def asked():
        raise AssertionError("the height is asked only on the first problem")
    assert stays_brief(True, True, True, asked)                 # still brief: the user's to open
    assert not stays_brief(True, False, False, asked)           # the list was open: it stays


def test_a_row_says_what_is_wrong_how_to_fix_it_and_where_and_a_failed_analysis_asks_a_report():
    d = Diagnostic("error", "heads must divide d_model", "set heads to 4", "attn", ("layers",))
    words, tip = row_words(d)
    assert words == ["heads must divide d_model", "set heads to 4", d.where]
    assert tip == "error: heads must divide d_model"
    assert not has_problems(_report())
    assert has_problems(_report(d)) and has_problems(_report(failures=["cost model failed"]))
    assert ANALYSIS_FAILED[1] == "analysis" and "report" in ANALYSIS_FAILED[0]


def test_a_fix_button_whose_block_is_gone_says_no_single_fix_applies():
    """main_window.apply_fix: graph.edit_rules.fix_edit's edit, or this line when it has none."""
    gpt = load_preset("tiny-gpt")
    gpt.node("layers").subgraph.node("attn").params.update(heads=3, kv_heads=3)
    (d,) = [d for d in report_on_graph(gpt).diagnostics if d.fix is not None]
    assert fix_edit(gpt, d) is not None
    gone = replace(d, node_id="gone")
    assert fix_edit(gpt, gone) is None
    assert no_fix_line(gone) == f"No single fix applies to: {d.message}"
