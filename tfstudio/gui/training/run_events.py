"""What the GUI does with a training run's events and commands, without Qt: one drain of the
events the child sent (:func:`take_events`: the metrics into the run's series, the looks
inside in order, its start and its end) and the state each command leads to
(:func:`after_command`, :func:`ended_state`). run_controller.py drains on a timer and signals
what they say."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...train.events import (EvalMetrics, Failed, Finished, Probe, RouterMetrics, Started,
                             StepMetrics)

COMMANDS = {"pause": ("running", "paused"), "resume": ("paused", "running")}


@dataclass
class Drained:
    started: Started | None = None   # the run's start, when it came in this drain
    progressed: bool = False         # new points in the series: one redraw, however many
    probes: list[dict] = field(default_factory=list)   # each look inside, oldest first
    end: Finished | Failed | None = None


def take_events(events, series) -> Drained:
    """Every event of ``events`` (oldest first) into ``series`` (a RunSeries), but the looks
    inside, which are kept in order for the step slider; what the drain signals."""
    drained = Drained()
    for event in events:
        if isinstance(event, Probe):
            drained.probes.append(event.data)
            continue
        series.add(event)
        if isinstance(event, Started):
            drained.started = event
        elif isinstance(event, (Finished, Failed)):
            drained.end = event
        elif isinstance(event, (StepMetrics, EvalMetrics, RouterMetrics)):
            drained.progressed = True
    return drained


def after_command(state: str, command: str) -> str | None:
    """The run's state once ``command`` (pause, resume, stop) is sent in ``state``; None: not
    sent (pause only while running, resume only while paused, stop while either)."""
    if command == "stop":
        return "stopping" if state in ("running", "paused") else None
    before, after = COMMANDS[command]
    return after if state == before else None


def ended_state(end) -> str:
    return "failed" if isinstance(end, Failed) else "finished"
