"""What the Problems panel says, from the report (no Qt): the order of its rows, its counts,
its Fix buttons' tooltips and its one summary line (nothing to list, the counts above the
list, or, brief, the first problem with links to its fix and to the list); and how far it
opens. gui/problems.py shows these words; gui/main_window.py sizes its dock."""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Callable

from ..graph.edit_rules import fix_text
from .graph_report import GraphReport

PROBLEMS_OPEN_H = 150  # the Problems dock's height when it has problems to list
PROBLEMS_MIN_H = 84    # the least it opens to: its summary line, the table's header and a row
BRIEF_CHARS = 80  # the first problem's words on the brief line, so its links stay in view
NO_PROBLEMS = "No problems: this graph compiles."


def counts_words(errors: int, warnings: int) -> str:
    """ "1 error, 2 warnings": the report's counts, as the status bar and the panel say."""
    return f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"


def open_height(fitted: bool, dock_height: int, spare: int) -> int:
    """How tall the dock opens on the first problem: PROBLEMS_OPEN_H, or less where the
    fitted canvas (``spare`` pixels of height to give up and stay whole) would then cut its
    picture; a view the user zoomed or panned is not kept whole."""
    return PROBLEMS_OPEN_H if not fitted else min(PROBLEMS_OPEN_H, dock_height + spare)


def opens_brief(height: int) -> bool:
    """Under PROBLEMS_MIN_H (a line and a problem's row) the panel stays one line naming
    the first problem, until the user asks for the list."""
    return height < PROBLEMS_MIN_H


def stays_brief(has_problems: bool, was_collapsed: bool | None, brief: bool,
                open_height: Callable[[], int]) -> bool:
    """Whether the panel is down to one line naming the first problem, after a report: never
    with nothing to list; on the first problem (the panel was one line, or never shown), when
    the dock would open under PROBLEMS_MIN_H (``open_height()``: how far it would open); and
    once brief, until the user asks for the list."""
    if not has_problems:
        return False
    if was_collapsed is not False and not brief:
        return opens_brief(open_height())
    return brief


def has_problems(report: GraphReport) -> bool:
    """Whether the panel has rows: a problem, or an analysis that failed."""
    return bool(report.diagnostics or report.failures)


ANALYSIS_FAILED = ("please report this; the graph may be unusual", "analysis")


def row_words(diagnostic) -> tuple[list[str], str]:
    """A problem's row (what is wrong, how to fix it, where) and its tooltip."""
    d = diagnostic
    return [d.message, d.hint, d.where], f"{d.severity}: {d.message}"


def no_fix_line(diagnostic) -> str:
    """What a Fix button says when the problem turns out to have no single fix (its block
    gone, or no one obvious fix: graph.edit_rules.fix_edit gave none)."""
    return f"No single fix applies to: {diagnostic.message}"


def fix_tip(diagnostic) -> str:
    """The tooltip of a problem's Fix button: what it sets, where, in one undo step."""
    return f"{fix_text(diagnostic)} in {diagnostic.where} (one undo step)"


def ordered(report: GraphReport) -> list:
    """The diagnostics as the panel lists them: errors first, then by where they are."""
    return sorted(report.diagnostics, key=lambda d: (d.severity != "error", d.where))


@dataclass(frozen=True)
class Summary:
    text: str      # rich text; the brief line's links are <a href='fix'> and <a href='list'>
    tooltip: str   # the first problem in full, on the brief line; else ""


def summary(report: GraphReport, brief: bool) -> Summary:
    """The panel's line: no problems, the counts over the list, or (``brief``) the counts and
    the first problem cut to BRIEF_CHARS, with its fix and the whole list as links."""
    if not has_problems(report):
        return Summary(NO_PROBLEMS, "")
    counts = counts_words(report.errors, report.warnings)
    if not brief:
        return Summary(f"{counts}. Click one to go to its block.", "")
    rows = ordered(report)
    first = rows[0] if rows else None
    links = ["<a href='list'>List all</a>"]
    if first is None:  # only an analysis failure: nothing to name
        return Summary(f"{counts}. — " + " · ".join(links), "")
    if first.fix is not None:
        links.insert(0, f"<a href='fix'>{html.escape(fix_text(first))}</a>")
    message = first.message if len(first.message) <= BRIEF_CHARS else (
        first.message[:BRIEF_CHARS - 1].rstrip() + "…")
    text = f"{counts}: {html.escape(message)} ({html.escape(first.where)})"
    return Summary(text + " — " + " · ".join(links),
                   f"{first.severity}: {first.message}\n{first.hint}")
