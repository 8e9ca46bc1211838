"""What the training workspace shows, decided without Qt: the run whose insides are viewed,
the look inside on screen (and the newest one a training step took), whether the views follow
training, which views are out of date, what the buttons and the progress bar say, where the
canvas colours come from, and the one line that names what is shown ("tiny-gpt · 14:02:03 ·
step 300 of 400") that every tab and header repeats.

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
    label: str = ""                              # "tiny-gpt · 14:02:03" (RunRecord.label)
    total: int = 0                               # the steps it was set to train
    trained_length: int = 0                      # its sequence length (0: unknown)

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


class WorkspaceState:
    """The Train workspace's one truth: which run, which step (or following training) and
    which text every view shows. (Not the trainer's lifecycle: that lives in train/trainer.py.)"""

    def __init__(self):
        self.run_state = "idle"          # the live run's: idle | running | paused | ... | failed
        self.viewed: ViewedRun | None = None
        self.snapshot: dict | None = None            # the look inside on screen
        self.training_snapshot: dict | None = None   # the newest look a training step took
        self.stale: set[str] = set()                 # views that have not drawn ``snapshot``
        self.curves_stale = False                    # new points while the curves were hidden
        self.blocked_reason: str | None = None       # why Train is disabled (an invalid graph)
        self.progress: tuple[int, int] | None = None  # (done, total) steps; None: no run yet
        self.follow = True        # the live run's newest look replaces the one on screen
        self.weights_step: int | None = None  # the step of the weights loaded for reading

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

    def started(self, run_dir: Path, total_steps: int, label: str = "",
                trained_length: int = 0) -> None:
        """A new live run: it becomes the viewed one, with nothing seen yet, followed."""
        self.run_state = "running"
        self.viewed = ViewedRun(Path(run_dir), live=True, label=label, total=total_steps,
                                trained_length=trained_length)
        self.snapshot = self.training_snapshot = None
        self.stale = set()
        self.progress = (0, total_steps)
        self.follow = True
        self.weights_step = None

    def opened(self, run_dir: Path, steps: list[int], done: int, total: int,
               label: str = "", trained_length: int = 0) -> None:
        """A past run: nothing of the previous one stays."""
        total = max(1, total or done)
        self.viewed = ViewedRun(Path(run_dir), live=False, steps=list(steps), label=label,
                                total=total, trained_length=trained_length)
        self.snapshot = self.training_snapshot = None
        self.stale = set()
        self.progress = (done, total)
        self.follow = False
        self.weights_step = None

    # ------------------------------------------------------------------ what is shown
    @property
    def shown_step(self) -> int | None:
        """The step whose weights made the look on screen (None: no look yet)."""
        return None if self.snapshot is None else int(self.snapshot.get("step", 0))

    @property
    def text(self) -> str:
        """The text the look on screen read ("" before the first look)."""
        return str((self.snapshot or {}).get("text") or "")

    @property
    def custom(self) -> bool:
        """The look on screen was read on the user's text after training (not a training look)."""
        return bool((self.snapshot or {}).get("custom"))

    def caption(self) -> str:
        """What every inspection view shows, named: run, step of how many, live or not, and
        whose text ("tiny-gpt · 14:02:03 · step 300 of 400 · following training")."""
        viewed = self.viewed
        if viewed is None:
            return "No run yet: press Train, or open a past run in Runs"
        parts = [viewed.label or viewed.path.name]
        step = self.shown_step
        if step is None:
            parts.append("no look inside yet" + (f" (training, {viewed.total:,} steps)"
                                                 if viewed.live and self.active else ""))
        else:
            parts.append(f"step {step:,} of {viewed.total:,}" if viewed.total
                         else f"step {step:,}")
            if self.custom:
                parts.append("your text, read now")
            elif viewed.live and self.active:
                parts.append("following training" if self.follow else
                             "replay (training goes on: tick Follow training)")
        return " · ".join(parts)

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


def latest_figures(series) -> str:
    """The viewed run's newest numbers, each with the step it was measured at: "step 22 of
    400 · loss 2.5056 · val 2.6120 at step 20 · acc 40% at step 20" (a ``RunSeries``). The
    progress line and the curves header both show this one string."""
    if not series.steps:
        return ""
    step = series.steps[-1]
    parts = [f"step {step:,} of {series.total_steps:,}" if series.total_steps
             else f"step {step:,}", f"loss {series.loss[-1]:.4f}"]
    if series.val_loss:
        at = series.val_steps[-1]
        where = "" if at == step else f" at step {at:,}"
        parts.append(f"val {series.val_loss[-1]:.4f}{where}")
        if series.accuracy and series.accuracy[-1] is not None:
            parts.append(f"acc {series.accuracy[-1]:.0%}{where}")
    return " · ".join(parts)
