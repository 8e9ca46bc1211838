"""How often the Train workspace redraws while a run trains, without Qt. Every millisecond the
GUI thread works is taken from the training process on a small machine, so the plots and the
live looks inside redraw at most a share of the time their last redraw cost, never once per
event (redraw_pacer.py runs the timers)."""
from __future__ import annotations

PLOT_REDRAW_MS = 250      # the plots redraw at most this often...
REDRAW_SHARE = 0.015      # ...and less often on a machine where a redraw takes longer than
MAX_REDRAW_MS = 2000      # this share of the time between two (never less than every 2 s)
LABEL_INTERVAL_MS = 500   # the progress bar and the status line follow a run this often
# a live look inside redraws its view at most this share of the time, from what its last
# redraw cost (the newest look is drawn; the ones in between only reach the step slider)
PROBE_REDRAW_SHARE = 0.02
MAX_PROBE_WAIT_MS = 2000


def plot_interval_ms(cost_ms: float) -> int:
    """The time until the plots' next redraw after one that cost ``cost_ms``."""
    return int(min(MAX_REDRAW_MS, max(PLOT_REDRAW_MS, cost_ms / REDRAW_SHARE)))


def probe_wait_ms(drawn_at: float, cost_s: float, now: float) -> int:
    """How long a new live look waits to be drawn (0: now), the last one drawn at ``drawn_at``
    (seconds, as ``now``) for ``cost_s`` of the GUI thread."""
    wait_s = drawn_at + cost_s / PROBE_REDRAW_SHARE - now
    return 0 if wait_s <= 0 else int(min(MAX_PROBE_WAIT_MS, wait_s * 1000))
