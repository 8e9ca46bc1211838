"""What the Compare view writes, without Qt: a lesson's line above the form, the verdict (its
word large, the checks under it), the table's two-line column names, the status line when the
runs are done and the names the runs take in Runs. compare_view.py and compare_results.py show
them."""
from __future__ import annotations

import html

from .compare_job import RunEnd, Shown


def lesson_html(title: str, base: str, base_edits, varies, claim: str) -> str:
    """A lesson above the form: its title, its base graph (with its edits), what it varies and
    its claim."""
    esc = html.escape
    base = base + "".join(f" ({k}={v})" for k, v in base_edits)
    varied = "; ".join(f"{key} = {', '.join(values)}" for key, values in varies)
    return (f"<b>{esc(title)}</b><br>Base {esc(base)}, varying {esc(varied)}.<br>"
            f"<i>Claim: {esc(claim)}</i>")


def verdict_html(shown: Shown) -> str:
    """The verdict of a finished comparison: its title, the claim, the verdict's word large
    with its tally after it, the checks as a list; without a lesson, that there is no claim
    to judge; then the runs that failed and the page."""
    esc = html.escape
    parts = [f"<h3>{esc(shown.title)}</h3>"]
    lines = list(shown.summary)
    if lines and lines[0].startswith("Claim"):
        parts.append(f"<p><i>{esc(lines.pop(0))}</i></p>")
    if lines and lines[0].startswith("Verdict:"):  # its word large, the tally after it
        word, _, rest = lines.pop(0).partition(" (")
        parts.append(f"<p><b style='font-size:large'>{esc(word)}</b>"
                     f"{esc(' (' + rest if rest else '')}</p>")
    if lines:
        parts.append("<ul>" + "".join(f"<li>{esc(line)}</li>" for line in lines) + "</ul>")
    if not shown.summary:
        parts.append(f"<p>{len(shown.rows)} variant(s) compared; a comparison of your own "
                     "has no claim to judge (a lesson has). The table below and the plots "
                     "hold the numbers.</p>")
    parts += [f"<p><b>Failed:</b> {esc(f)}</p>" for f in shown.failures]
    if shown.page is not None:
        parts.append(f"<p>Page: {esc(str(shown.page))}</p>")
    return "".join(parts)


def two_lines(header: str, longest: int = 12) -> str:
    """A long column name on two lines, broken at the space nearest its middle, so the report's
    ten columns fit the width of a laptop's Compare view."""
    if len(header) <= longest or " " not in header:
        return header
    middle = len(header) / 2
    cut = min((i for i, ch in enumerate(header) if ch == " "), key=lambda i: abs(i - middle))
    return header[:cut] + "\n" + header[cut + 1:]


def done_line(shown: Shown) -> str:
    return (f"Done: {len(shown.rows)} variant(s); page {shown.page}" +
            (f"; {len(shown.failures)} run(s) failed" if shown.failures else ""))


def finished_runs(shown: Shown) -> list[tuple[str, str]]:
    """(run folder, name in Runs) of every run of a finished comparison."""
    return [(str(run_dir), f"{name} seed {seed}")
            for name, runs in shown.runs.items() for seed, run_dir in runs]


def stopped_runs(ends: list[RunEnd]) -> list[tuple[str, str]]:
    """(run folder, name in Runs) of a stopped comparison's runs with steps to look at: the
    finished ones, and the stopped ones named with the step they stopped at."""
    return [(str(e.run_dir), f"{e.variant} seed {e.seed}"
             + (f" (stopped at step {e.step})" if e.state == "stopped" else ""))
            for e in ends if e.state in ("completed", "stopped") and e.step]
