"""What the Train workspace shows, as one model without Qt: the run (its folder, its own
name, its graph, setup and tokenizer, whether it is training), the step the views read and the
text they read. Each thing a user does that changes what is shown is one transition here:
starting a run, opening one (from Runs or as a Compare variant), a look arriving from
training, the step slider, Look on a new text. The views render from it and their captions
are written here, so no view can name one run and draw another.

Two kinds of view read the step: the looks inside (attention, positions, experts) show the
look kept at that step; the views that run the weights (next token, explain) load the
checkpoint kept at that step, else the nearest one kept, and say which. A view with nothing
for the shown run (no look kept, no weights saved) shows its empty state, never an older
run's data. Plain listeners (callables) hear every transition.

The same model holds the live run's lifecycle (idle, running, paused…: the buttons and the
progress bar), whether the views follow training, and the look inside on screen (with the
newest look a training step took, whose gradient norms colour the canvas after a Look) and
which views have not drawn it yet. No PySide6 import here, on purpose (a test checks).
"""
from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...probes import SnapshotStore

CHECKPOINTS = "checkpoints"
ACTIVE = ("running", "paused", "stopping")   # the live run's states while it holds the trainer
TELEMETRY_TITLES = {"grad_norm": "gradient norm", "activation_rms": "activation RMS"}

LOOK_VIEWS = ("attention", "positions", "experts")   # show the look kept at the step
WEIGHT_VIEWS = ("next_token", "explain")             # run the weights kept at (or near) it
STEP_VIEWS = LOOK_VIEWS + WEIGHT_VIEWS               # every view the step bar drives
DRAWN_VIEWS = LOOK_VIEWS + ("next_token",)  # draw the look on screen (next token: a live one)


@dataclass(frozen=True)
class ShownRun:
    """The run the workspace shows."""
    path: Path
    name: str                      # "tiny-gpt · 04:33:47": its folder's time, never an mtime
    live: bool                     # training right now
    total: int = 0                 # the steps it was set to train
    graph: Any = None              # its own graph (graph.json), fitted vocabulary and all
    config: Any = None             # its TrainConfig (config.json); None: unreadable
    looks: tuple[int, ...] = ()    # steps that kept a look inside
    checkpoints: tuple[int, ...] = ()  # steps whose weights were kept

    @property
    def tokenizer(self) -> str:
        return self.config.tokenizer if self.config is not None else ""

    @property
    def trained_length(self) -> int:
        """The sequence length it trained at (0: unknown)."""
        return self.config.seq_len if self.config is not None else 0

    @property
    def store(self) -> SnapshotStore:
        """Its kept looks inside, on disk."""
        return SnapshotStore(self.path)


@dataclass(frozen=True)
class Shown:
    """One moment of the workspace: the run, the step the slider stands on, the text read."""
    run: ShownRun | None = None
    step: int | None = None        # the slider's step (None: no look and no weights yet)
    text: str = ""                 # the text the looks read (the run's probe text at first)
    custom_at: int | None = None   # Look read ``text`` now, with the weights of this step

    # ------------------------------------------------------------------ what each view reads
    def look_step(self) -> int | None:
        """The step of the look the look views show (None: none kept for this run)."""
        if self.run is None:
            return None
        if self.custom_at is not None:
            return self.custom_at
        return self.step if self.step in self.run.looks else None

    def weights_step(self) -> int | None:
        """The checkpoint the weight views run: the one kept at the slider's step, else the
        nearest kept one (an earlier one on a tie); None: no weights kept (yet)."""
        run = self.run
        if run is None or not run.checkpoints or (run.live and self.step is None):
            return None
        if self.step is None:
            return run.checkpoints[-1]
        return min(run.checkpoints, key=lambda s: (abs(s - self.step), s))

    def view_step(self, view: str) -> int | None:
        """While a run trains there are no weights to run: every view shows its looks."""
        if view in WEIGHT_VIEWS and self.run is not None and not self.run.live:
            return self.weights_step()
        return self.look_step()

    def shows(self, view: str) -> tuple[Path | None, int | None, str]:
        """(run folder, step, text) ``view`` must show; step None: its empty state."""
        step = self.view_step(view)
        return (self.run.path if self.run else None, step, self.text if step is not None else "")

    # ------------------------------------------------------------------ captions
    def caption(self, view: str = "attention") -> str:
        """The line naming what ``view`` shows: "tiny-gpt · 04:33:47 · step 30 of 60", "… ·
        the weights of step 40 of 60 (the nearest kept to step 30)", or what to do."""
        run = self.run
        if run is None:
            return "No run yet: press Train, or open a past run in Runs"
        of = f" of {run.total:,}" if run.total else ""
        step = self.view_step(view)
        if view in WEIGHT_VIEWS and not run.live:
            if step is None:
                return f"{run.name} · this run saved no weights"
            near = ""
            if self.step is not None and step != self.step:
                near = f" (the nearest kept to step {self.step:,})"
            return f"{run.name} · the weights of step {step:,}{of}{near}"
        if step is None:
            return f"{run.name} · {self.empty_reason()}"
        said = f"{run.name} · step {step:,}{of}"
        return said + (" · your text, read now" if self.custom_at is not None else "")

    def empty_reason(self) -> str:
        """Why the look views are empty for the shown run, and what to do."""
        run = self.run
        if run is None:
            return "No run yet: press Train, or open a past run in Runs"
        if run.live:
            return f"no look inside yet (training, {run.total:,} steps)"
        if self.step is not None and run.looks:
            return f"no look kept at step {self.step:,}"
        if run.checkpoints:
            return ("no look inside kept: press Look to read the probe text with the weights "
                    f"of step {run.checkpoints[-1]:,}")
        return "no look inside kept, and no weights saved to read one with"


@dataclass(frozen=True)
class Buttons:
    train: bool
    pause: bool
    pause_text: str
    stop: bool
    setup: bool


def buttons_for(run_state: str, blocked_reason: str | None) -> Buttons:
    """What the panel's buttons and the Train menu offer in the live run's ``run_state``:
    Train while nothing trains and the graph is valid, Pause (Resume when paused) and Stop
    while a run holds the trainer and is not stopping, the setup while nothing trains."""
    active = run_state in ACTIVE
    return Buttons(train=not active and not blocked_reason,
                   pause=run_state in ("running", "paused"),
                   pause_text="Resume" if run_state == "paused" else "Pause",
                   stop=run_state in ("running", "paused"), setup=not active)


def first_error(diagnostics):
    """The first diagnostic that is an error (what keeps the graph from training), or None."""
    return next((d for d in diagnostics if d.severity == "error"), None)


def blocked_reason_of(diagnostics, errors: int) -> str | None:
    """Why the graph cannot be trained (its first error, and how many more), else None."""
    first = first_error(diagnostics)
    if first is None:
        return None
    more = errors - 1
    return f"{first.where}: {first.message}" + (f" (and {more} more)" if more else "")


def blocked_html(reason: str | None) -> str:
    """The panel's line under Train for an invalid graph: the reason (as text, escaped) and a
    link to the problem; empty (the line hidden) when the graph trains."""
    if not reason:
        return ""
    return f"Cannot train: {html.escape(reason)} <a href='problem'>Show the problem</a>"


def is_training(path, run) -> bool:
    """Whether the run folder ``path`` is the live ``run``'s while it holds the trainer (open:
    back to following it; forget: refused)."""
    return run is not None and run.active and Path(path) == run.run_dir


def look_where(look: dict) -> str:
    """Where a look inside was taken, as its views' lines say: Look's reading of the user's
    text now, or the training step."""
    return "now, on your text" if look.get("custom") else f"at step {look.get('step', 0):,}"


def train_tips(reason: str | None) -> tuple[str, str]:
    """Train's tooltip on the panel's button and status tip in the Train menu: why it is off
    (``reason``), or what it does."""
    if reason:
        return reason, f"Cannot train: {reason}"
    return ("Train the graph on the canvas with these settings",
            "train the graph on the canvas with the run setup")


@dataclass
class ShownState:
    """The Train workspace's one model: ``now`` (the run, step and text every view shows) and
    its transitions, the live run's lifecycle, and the look inside on screen. Listeners hear
    ``(before, now)`` after each transition. (Not the trainer's lifecycle: train/trainer.py.)"""
    now: Shown = field(default_factory=Shown)
    listeners: list[Callable[[Shown, Shown], None]] = field(default_factory=list)
    run_state: str = "idle"        # the live run's: idle | running | paused | ... | failed
    blocked_reason: str | None = None        # why Train is disabled (an invalid graph)
    progress: tuple[int, int] | None = None  # (done, total) steps of the shown run
    follow: bool = True            # the live run's newest look replaces the one on screen
    snapshot: dict | None = None   # the look inside on screen
    training_snapshot: dict | None = None    # the newest look a training step took
    stale: set[str] = field(default_factory=set)  # views that have not drawn ``snapshot``
    curves_stale: bool = False     # new points while the curves were hidden
    # (the live run's folder, a text the user set for it that no look has read yet)
    asked: tuple[Path, str] | None = None

    def listen(self, listener: Callable[[Shown, Shown], None]) -> None:
        self.listeners.append(listener)

    def _become(self, now: Shown) -> Shown:
        """``now`` is shown; a moment with no look for its run has none on screen, never an
        older run's."""
        before, self.now = self.now, now
        if now.look_step() is None:
            self.snapshot, self.stale = None, set()
        for listener in list(self.listeners):
            listener(before, now)
        return now

    def _clear_looks(self) -> None:
        self.snapshot = self.training_snapshot = None
        self.stale = set()

    # ------------------------------------------------------------------ the live run
    @property
    def active(self) -> bool:
        return self.run_state in ACTIVE

    @property
    def training_shown(self) -> bool:
        """The views show the run that is training now."""
        return self.now.run is not None and self.now.run.live and self.active

    def refusal(self) -> str | None:
        """Why Train cannot start now (None: it can)."""
        if self.active:
            return "A run is already going: stop it first, or wait for it to finish"
        if self.blocked_reason:
            return f"Cannot train: {self.blocked_reason}"
        return None

    def buttons(self) -> Buttons:
        return buttons_for(self.run_state, self.blocked_reason)

    def progress_text(self) -> str:
        return "no run yet" if self.progress is None else "%v / %m steps"

    # ------------------------------------------------------------------ transitions
    def start_run(self, path: Path, name: str, total: int, graph=None, config=None) -> Shown:
        """Train: a new live run, nothing looked at yet, followed; it reads the setup's probe
        text."""
        self.run_state, self.progress, self.follow = "running", (0, total), True
        self._clear_looks()
        self.asked = None
        run = ShownRun(Path(path), name, True, total, graph, config)
        return self._become(Shown(run, None, config.probe_text if config else ""))

    def back_to_training(self, path: Path, name: str, total: int, graph=None, config=None,
                         looks=()) -> Shown:
        """The run training opened again after another: the ``looks`` it kept so far."""
        run = ShownRun(Path(path), name, True, total, graph, config, tuple(sorted(looks)))
        return self._become(Shown(run, None, config.probe_text if config else ""))

    def open_run(self, path: Path, name: str, total: int, graph=None, config=None,
                 looks=(), checkpoints=(), text: str = "", done: int = 0) -> Shown:
        """A past run (from Runs, or a Compare variant) of ``done`` logged steps: its newest
        look (else its newest weights) and the text that look read (else its own probe
        text). Nothing of the previous run stays."""
        total = max(1, total or done)  # its config lost: what it logged is all of it
        self.progress, self.follow = (done, total), False
        self._clear_looks()
        looks, checkpoints = tuple(sorted(looks)), tuple(sorted(checkpoints))
        run = ShownRun(Path(path), name, False, total, graph, config, looks, checkpoints)
        step = looks[-1] if looks else (checkpoints[-1] if checkpoints else None)
        own = config.probe_text if config is not None else ""
        return self._become(Shown(run, step, text or own))

    def look_arrived(self, step: int, text: str, follow: bool = True) -> Shown:
        """The run training kept a look at ``step`` (its last one may be drawn just after it
        ended); followed, the views move to it."""
        now = self.now
        if now.run is None:
            return now
        self._read(now.run.path, text)
        run = replace(now.run, looks=tuple(sorted(set(now.run.looks) | {step})))
        if not follow:
            return self._become(replace(now, run=run))
        return self._become(Shown(run, step, text))

    def run_ended(self, checkpoints) -> Shown:
        """The live run stopped: its weights are kept; the step stays where it was."""
        now = self.now
        if now.run is None:
            return now
        run = replace(now.run, live=False, checkpoints=tuple(sorted(checkpoints)))
        step = now.step if now.step is not None else (run.checkpoints[-1]
                                                      if run.checkpoints else None)
        return self._become(replace(now, run=run, step=step))

    def slider_moved(self, step: int, text: str) -> Shown:
        """The step bar: every view reads ``step`` (the look views the look kept there, which
        read ``text``; the weight views its checkpoint or the nearest kept one)."""
        now = self.now
        if now.run is None:
            return now
        return self._become(Shown(now.run, step, text or now.text))

    def looked(self, text: str) -> Shown:
        """Look: ``text`` read now with the weights the weight views run."""
        now = self.now
        at = now.weights_step()
        if now.run is None or at is None:
            return now
        return self._become(replace(now, text=text, custom_at=at))

    def show_look(self, look: dict | None) -> Shown:
        """``look`` goes on screen, every view that draws it out of date until drawn; it moves
        the views to its step and text: Look's reading of the user's text, the training run's
        newest look, or the one kept at the slider's step."""
        self.snapshot = look
        if look is None:
            return self.now
        if not look.get("custom"):
            self.training_snapshot = look
        self.stale = set(DRAWN_VIEWS)
        text, step, run = str(look.get("text") or ""), int(look.get("step", 0)), self.now.run
        if run is not None:
            self._read(run.path, text)
        if look.get("custom"):
            return self.looked(text)
        if run is not None and step not in run.looks:
            return self.look_arrived(step, text)
        return self.slider_moved(step, text)

    # ------------------------------------------------------------------ the probe-text boxes
    def ask(self, live_run: Path | None, text: str) -> None:
        """The user set ``text``: for the run training in ``live_run`` (its next look reads
        it), or, with None, for a look read now (nothing waits)."""
        self.asked = (Path(live_run), text) if live_run is not None else None

    def _read(self, path: Path, text: str) -> None:
        if self.asked == (path, text):
            self.asked = None

    def box_text(self, look_text: str, typing: bool = False) -> str | None:
        """What both probe-text boxes show once a look that read ``look_text`` is on screen
        (None: leave them): that text, whether the look came while its run trained or just
        after it ended (a run's default text too, as when the run is opened from Runs); never
        while the user types in one, nor over a text the user set for this run that no look
        has read yet (the next look reads it)."""
        if not look_text or typing:
            return None
        run = self.now.run
        if self.asked is not None and run is not None and self.asked[0] == run.path \
                and self.asked[1] != look_text:
            return None
        return look_text

    # ------------------------------------------------------------------ what is on screen
    @property
    def shown_step(self) -> int | None:
        """The step whose weights made the look on screen (None: no look on screen)."""
        return None if self.snapshot is None else int(self.snapshot.get("step", 0))

    def caption(self, view: str = "attention") -> str:
        """What ``view`` shows, named (:meth:`Shown.caption`); a look of the run training says
        whether the views follow it."""
        said = self.now.caption(view)
        if self.training_shown and self.now.look_step() is not None:
            said += (" · following training" if self.follow else
                     " · replay (training goes on: tick Follow training)")
        return said

    def take_stale(self, view: str) -> bool:
        """Whether ``view`` (now visible) must draw the look on screen; it counts as drawn
        after."""
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


def kept_checkpoints(run_dir: str | Path) -> dict[int, Path]:
    """{step: folder} of the checkpoints a run folder keeps (read from their names; loading
    verifies them and passes over a damaged one)."""
    from ...runs.checkpoint import name_order
    folder = Path(run_dir) / CHECKPOINTS
    kept: dict[int, Path] = {}
    if not folder.is_dir():
        return kept
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        try:
            step, _copy = name_order(path.name)
        except ValueError:
            continue  # LATEST, a half-written partial
        if path.is_dir():
            kept[step] = path
    return kept
