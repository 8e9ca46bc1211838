"""The Train workspace's views against the run training, without Qt: whether they show it
(:func:`shows_run`), the look to draw for a step or when Follow training is ticked again (the
run's newest look, still in memory, or the one kept on disk: :func:`newest_look`), and how tall
the progress line under the bar stands (:func:`line_height`). panel.py and redraw_pacer.py
draw what they say."""
from __future__ import annotations

from pathlib import Path

PROGRESS_LINES = 2   # the progress line keeps room for two lines (its parts wrap between)


def shows_run(viewed, run) -> bool:
    """Whether the views show ``run`` (the run training; its last look may come after its
    end), ``viewed`` being the run they show (a ShownRun)."""
    return viewed is not None and run is not None and Path(viewed.path) == Path(run.run_dir)


def newest_look(viewed, run, step: int | None = None) -> dict | None:
    """The live run's newest look (in memory) when the views show that live run and it is
    the look asked for: the one at ``step``, or with None (Follow training ticked again)
    whichever is newest; None: read the look kept on disk (or nothing to follow)."""
    latest = run.latest_probe if run is not None else None
    if viewed is None or not viewed.live or latest is None:
        return None
    return latest if step is None or latest.get("step") == step else None


def line_height(text_height: float, spacing: int) -> int:
    """The progress line's fixed height: its text's whole lines at the column's width, at
    least PROGRESS_LINES (a height set at each update would lay the column out each time)."""
    return max(PROGRESS_LINES, round(text_height / spacing)) * spacing
