"""What the training workspace shows, decided without Qt: the run whose insides are viewed,
the look inside on screen (and the newest one a training step took), which views are out of
date, what the buttons and the progress bar say, and where the canvas colours come from.

The panel (Qt) asks this class and draws what it answers; tests drive it without a window.
No PySide6 import here, on purpose (a test checks).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...probes import SnapshotStore

ACTIVE = ("running", "paused", "stopping")
VIEWS = ("attention", "positions", "experts", "next_token")   # those that show a look inside
TELEMETRY_TITLES = {"grad_norm": "gradient norm", "activation_rms": "activation RMS"}


@dataclass
class ViewedRun:
    """The run whose insides the views show."""
    path: Path
    live: bool                                   # the run training right now
    steps: list[int] = field(default_factory=list)

    @property
    def store(self) -> SnapshotStore:
        return SnapshotStore(self.path)


@dataclass(frozen=True)
class Buttons:
    train: bool
    pause: bool
    pause_text: str
    stop: bool
    setup: bool


class RunState:
    def __init__(self):
        self.run_state = "idle"          # the live run's: idle | running | paused | ... | failed
        self.viewed: ViewedRun | None = None
        self.snapshot: dict | None = None            # the look inside on screen
        self.training_snapshot: dict | None = None   # the newest look a training step took
        self.stale: set[str] = set()                 # views that have not drawn ``snapshot``
        self.curves_stale = False                    # new points while the curves were hidden
        self.blocked_reason: str | None = None       # why Train is disabled (an invalid graph)
        self.progress: tuple[int, int] | None = None  # (done, total) steps; None: no run yet

    # ------------------------------------------------------------------ lifecycle
    @property
    def active(self) -> bool:
        return self.run_state in ACTIVE

    def refusal(self) -> str | None:
        """Why Train cannot start now (None: it can)."""
        if self.active:
            return "A run is already going: stop it first, or wait for it to finish"
        if self.blocked_reason:
            return f"Cannot train: {self.blocked_reason}"
        return None

    def buttons(self) -> Buttons:
        s = self.run_state
        return Buttons(train=not self.active and not self.blocked_reason,
                       pause=s in ("running", "paused"),
                       pause_text="Resume" if s == "paused" else "Pause",
                       stop=s in ("running", "paused"), setup=not self.active)

    def started(self, run_dir: Path, total_steps: int) -> None:
        """A new live run: it becomes the viewed one, with nothing seen yet."""
        self.run_state = "running"
        self.viewed = ViewedRun(Path(run_dir), live=True)
        self.snapshot = self.training_snapshot = None
        self.stale = set()
        self.progress = (0, total_steps)

    def opened(self, run_dir: Path, steps: list[int], done: int, total: int) -> None:
        """A past run: nothing of the previous one stays."""
        self.viewed = ViewedRun(Path(run_dir), live=False, steps=list(steps))
        self.snapshot = self.training_snapshot = None
        self.stale = set()
        self.progress = (done, max(1, total or done))

    def progress_text(self) -> str:
        return "no run yet" if self.progress is None else "%v / %m steps"

    # ------------------------------------------------------------------ looks inside
    def probed(self, step: int) -> None:
        """The live run took a look at ``step`` (kept for the step slider)."""
        if self.viewed is not None and self.viewed.live and step not in self.viewed.steps:
            self.viewed.steps.append(step)

    def show(self, snapshot: dict | None) -> None:
        """``snapshot`` goes on screen: every inspection view is out of date until drawn."""
        self.snapshot = snapshot
        if snapshot is None:
            return
        if not snapshot.get("custom"):
            self.training_snapshot = snapshot
        self.stale = set(VIEWS)

    def take_stale(self, view: str) -> bool:
        """Whether ``view`` (now visible) must draw the snapshot; it counts as drawn after."""
        if view not in self.stale or self.snapshot is None:
            return False
        self.stale.discard(view)
        return True

    def telemetry(self, mode: str) -> tuple[dict | None, str]:
        """(the look whose values colour the canvas, what the note adds). A look at the user's
        own text after training ran no backward pass: gradient norms come from the last look a
        training step took, and the note says so."""
        snapshot = self.snapshot
        if mode == "off" or snapshot is None or snapshot.get(mode):
            return snapshot, ""
        title = TELEMETRY_TITLES.get(mode, mode)
        last = self.training_snapshot
        if last is not None and last.get(mode):
            return last, (f". Your text's look has no {title} (no training step): colours "
                          f"from step {last.get('step', 0)}")
        return None, f"No {title} in this look: nothing is coloured"
