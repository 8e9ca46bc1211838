"""What ``tfstudio train`` prints while it trains: a tqdm bar (rate, ETA, the terminal's width)
on a terminal, plain lines when the output goes to a file or a pipe."""
from __future__ import annotations

import os
import shutil
import sys

from tqdm import tqdm

from ..train.events import EvalMetrics, Failed, Finished, Started, StepMetrics
from .help import number

PLAIN_LINES = 20  # step lines a non-terminal output gets over the whole run


class TrainingProgress:
    """A training listener: one bar for the steps; the start, evaluations and the end on lines
    of their own. A failure only closes the bar (the command reports it)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.bar: tqdm | None = None
        self.total = 0

    def __call__(self, event) -> None:
        if isinstance(event, Started):
            self._started(event)
        elif isinstance(event, StepMetrics):
            self._step(event)
        elif isinstance(event, EvalMetrics):
            accuracy = f", accuracy {event.accuracy:.1%}" if event.accuracy is not None else ""
            self._line(f"step {event.step}: validation loss {number(event.val_loss)}, "
                       f"perplexity {number(event.perplexity)}{accuracy}")
        elif isinstance(event, Finished):
            self._close()
            self._line(f"{event.reason} at step {event.step} in {event.elapsed_s:.1f}s; "
                       f"final loss {number(event.final_loss)}")
        elif isinstance(event, Failed):
            self._close()

    def _started(self, event: Started) -> None:
        self.total = event.total_steps
        self._line(f"training {event.graph_name or 'graph'}: {event.params:,} parameters, "
                   f"{event.objective}, {event.device}/{event.precision}")
        if self.tty:
            size = _fixed_size(self.stream)
            self.bar = tqdm(total=event.total_steps, initial=event.step, file=self.stream,
                            unit="step", leave=False, dynamic_ncols=size is None,
                            ncols=size and size.columns, nrows=size and size.lines)

    def _step(self, event: StepMetrics) -> None:
        stats = (f"loss {number(event.loss)} lr {event.lr:.2e} "
                 f"{event.tokens_per_s:,.0f} tok/s")
        if self.bar is not None:
            self.bar.set_postfix_str(stats, refresh=False)
            self.bar.update(event.step - self.bar.n)
        elif event.step % max(1, self.total // PLAIN_LINES) == 0 or event.step == self.total:
            rate = event.step / event.elapsed_s if event.elapsed_s > 0 else 0.0
            self._line(f"step {event.step}/{self.total}: {stats}, {event.elapsed_s:.1f}s "
                       f"elapsed" + (f", {rate:.1f} steps/s" if rate else ""))

    def _line(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def _close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _fixed_size(stream) -> os.terminal_size | None:
    """None when the terminal reports its size (the bar follows it as it changes); else a fixed
    size from $COLUMNS/$LINES or 80 x 24: a terminal of size 0, as some pseudo-terminals report,
    would make tqdm hide the bar."""
    try:
        size = os.get_terminal_size(stream.fileno())
        if size.columns > 0 and size.lines > 0:
            return None
    except (AttributeError, OSError, ValueError):
        pass
    return shutil.get_terminal_size()
