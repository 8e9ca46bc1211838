"""What the Compare view writes, without Qt: a lesson's line above the form, the verdict (its
word large, the checks under it), the table's two-line column names, the status line when the
runs start and when they are done and the names the runs take in Runs; what the form asks
(the ticked values crossed, the eval lengths a corpus takes); and what the results' plots draw
of the report's data (the floor of a log axis; which points and layers: report_plots, the report's
pictures' rule). compare_view.py and compare_results.py show them."""
from __future__ import annotations

import html
import math

from ..report_plots import FLOOR  # the report's pictures and the view's plot share it
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


def varies_of(ticked) -> list[tuple[str, list[str]]]:
    """The switches to cross from the ticked (switch, value) boxes, in the form's order: each
    switch once, with its ticked values."""
    chosen: dict[str, list[str]] = {}
    for key, value in ticked:
        chosen.setdefault(key, []).append(value)
    return list(chosen.items())


def lengths_field(corpus: str, lesson: str | None) -> tuple[bool, str]:
    """(whether Eval lengths is editable, its tooltip): a task is scored on its answers and a
    lesson brings its own lengths."""
    task = corpus.startswith("task:")
    return (not task and not lesson,
            "a task is scored on its answers: no loss by position" if task
            else "loss measured by position up to each length")


def eval_lengths(text: str, enabled: bool) -> list[int]:
    """The lengths typed in Eval lengths ("64, 128"), none while it is off (ValueError on a
    word)."""
    return [int(x) for x in text.split(",") if x.strip()] if enabled else []


def eval_every(steps: int) -> int:
    """A comparison of your own evaluates ten times a run."""
    return max(1, steps // 10)


def started_line(variants: int, seeds: int, folder) -> str:
    return f"Training {variants} variant(s) x {seeds} seed(s) in {folder}"


def table_cells(shown: Shown) -> list[list[tuple[str, str]]]:
    """The report's table as (text, tooltip) cells: each cell's tooltip names its column in
    full (the header wraps it on two lines) and says the value again."""
    return [[(text, f"{shown.header[c]}: {text}") for c, text in enumerate(row)]
            for row in shown.rows]


def done_line(shown: Shown) -> str:
    return (f"Done: {len(shown.rows)} variant(s); page {shown.page}" +
            (f"; {len(shown.failures)} run(s) failed" if shown.failures else ""))


def run_name(variant: str, seed: int) -> str:
    """A comparison's run's name in Runs."""
    return f"{variant} seed {seed}"


def seed_entries(shown: Shown | None, variant: str) -> list[tuple[str, tuple[str, int, str]]]:
    """The Seed box's entries for the ``variant`` picked in the table: (label, (variant, seed,
    run folder)) of each run of it that finished; none (Open off) when nothing is shown."""
    runs = (shown.runs.get(variant) or []) if shown is not None else []
    return [(f"{seed}", (variant, seed, str(run_dir))) for seed, run_dir in runs]


def finished_runs(shown: Shown) -> list[tuple[str, str]]:
    """(run folder, name in Runs) of every run of a finished comparison."""
    return [(str(run_dir), run_name(name, seed))
            for name, runs in shown.runs.items() for seed, run_dir in runs]


def stopped_runs(ends: list[RunEnd]) -> list[tuple[str, str]]:
    """(run folder, name in Runs) of a stopped comparison's runs with steps to look at: the
    finished ones, and the stopped ones named with the step they stopped at."""
    return [(str(e.run_dir), run_name(e.variant, e.seed)
             + (f" (stopped at step {e.step})" if e.state == "stopped" else ""))
            for e in ends if e.state in ("completed", "stopped") and e.step]


VERDICT_HINT = ("The verdict appears here when the runs finish: a lesson's claim, whether it "
                "holds on your runs (decided by the spread over seeds), and the numbers.")


def intro_html(intro: str) -> str:
    """The verdict page before the runs finish: a lesson's claim (escaped), then the hint."""
    hint = f"<p><i>{VERDICT_HINT}</i></p>"
    return f"<p>{html.escape(intro)}</p>{hint}" if intro else hint


def steps_done(points: dict) -> int:
    """Steps trained so far over every run drawn: each run's last logged step, summed."""
    return sum(run[-1][0] for run in points.values())


def log_floored(values) -> list[float]:
    """Values for a log axis: below FLOOR (0 included) and not finite drawn at FLOOR."""
    return [max(x, FLOOR) if math.isfinite(x) else FLOOR for x in values]


NO_RUN_FINISHED = "No run finished."


def legend_name(variant: str, drawn: dict) -> str | None:
    """The legend entry of a new live loss curve: the variant's name for its first seed drawn,
    none for its other seeds (one entry per variant, in its colour)."""
    return None if any(v == variant for v, _ in drawn) else variant


def loss_hint(curves: dict) -> str:
    """The report's loss plot's hint: none over curves, else that no run finished."""
    return "" if curves else NO_RUN_FINISHED
