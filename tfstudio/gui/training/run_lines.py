"""What the Train workspace says about a run, without Qt: the status line when it starts (and
why its parameter count differs from the canvas's), the status line and error when it ends
(run_lifecycle.py shows them), what opening a past run did (opened_runs.py), which weights
loaded (generation.py) and its row in the Runs list (runs_view.py)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...graph import Graph
from ...train.events import Failed
from ..param_count import RUN_HEADER
from ..text import short_name
from .history import RunRecord, corpus_name
from .series import duration

PROGRESS_NAME_CHARS = 24  # "tiny-gpt · 09:41:03" whole; a longer name elided in its middle
COLUMNS = ["Run", RUN_HEADER, "Corpus", "Steps", "Final loss", "Status", "Folder"]  # Runs list

FAILURES = {"nan": "the loss stopped being a number", "oom": "out of memory",
            "error": "an error"}   # a failure's reason, as the error says it


def started_line(event, graph: Graph, tokenizer) -> str:
    """"Training tiny-gpt: 1,234 parameters on cpu (fp32), next-token (the canvas counts …)"."""
    return (f"Training {event.graph_name or 'the graph'}: {event.params:,} parameters "
            f"on {event.device} ({event.precision}), {event.objective}"
            f"{params_note(graph, event.params, tokenizer)}")


def params_note(graph: Graph, params: int, tokenizer) -> str:
    """Why the run's parameter count differs from the canvas's: the vocabulary is resized to
    the tokenizer's (embedding and head rows), which the canvas cannot know."""
    try:
        from ...graph.cost import estimate_cost
        canvas = estimate_cost(graph).total_params
    except Exception:  # noqa: BLE001 - a note, never a failure
        return ""
    if canvas == params:
        return ""
    vocab = getattr(tokenizer, "vocab_size", None)
    why = (f"the vocabulary is resized to the tokenizer's {vocab:,} tokens" if vocab
           else "the vocabulary is resized to the tokenizer's")
    return f" (the canvas counts {canvas:,}: {why})"


def ended_lines(name: str, event) -> tuple[str, str | None]:
    """(the status line, the error to show or None) for a run named ``name`` that ended."""
    if isinstance(event, Failed):
        what = FAILURES.get(event.reason, event.reason)
        return (f"{name}: failed at step {event.step}; the curves so far are kept",
                f"Training stopped at step {event.step}: {what}.\n{event.message}")
    return (f"{name}: {event.reason} at step {event.step:,} in {duration(event.elapsed_s)}" +
            (f"; final loss {event.final_loss:.4f}" if event.final_loss else ""), None)


def opened_line(label: str, logged: int, looks: int, canvas: str, config_read: bool) -> str:
    """"Opened tiny-gpt · 04:33:47: 1,200 logged steps, 4 snapshots; <what the canvas did>",
    and, when its config.json cannot be read, that Run setup keeps the user's settings."""
    return (f"Opened {label}: {logged:,} logged steps, {looks} snapshots"
            + (f"; {canvas}" if canvas else "")
            + ("" if config_read else
               "; its config.json cannot be read, so Run setup keeps your settings"))


def canvas_line(label: str, refusal: str | None = None, unreadable: str | None = None) -> str:
    """What opening the run ``label`` did to the canvas: its graph shown (undoable), or kept
    the user's, because the edit was refused or the run's graph cannot be read."""
    if unreadable is not None:
        return f"the canvas keeps your graph: the run's graph cannot be read ({unreadable})"
    if refusal:
        return f"the canvas keeps your graph ({refusal})"
    return f"the canvas shows the graph of {label} (Ctrl+Z brings yours back)"


def checkpoint_note(used: Path | None, skipped: list[str]) -> str:
    """One line naming the checkpoint the weights came from and each newer one passed over as
    damaged, with why ("": the newest one was used)."""
    if used is None or not skipped:
        return ""
    root = str(used.parent) + "/"
    why = "; ".join(problem.replace(root, "") for problem in skipped)
    newer = "a newer one" if len(skipped) == 1 else f"{len(skipped)} newer ones"
    return (f"Loaded the weights of {used.name}, the newest intact checkpoint: skipped {newer} "
            f"because {why} (nothing was deleted)")


def loaded_line(note: str, step: int, opened: str = "") -> str:
    """The status line once a run's weights are loaded: which checkpoint (``note``, when a
    newer one was skipped), else the step and what to do, and what opening did (``opened``)."""
    return ((note or f"Loaded the weights of step {step:,}: type a prompt, move the sliders, "
                     "generate") + (f"; {opened}" if opened else ""))


@dataclass(frozen=True)
class RunsRow:
    """A run's row in the Runs list: its cells (in ``COLUMNS`` order) and their tooltips."""
    cells: list[str]
    tips: dict[str, str]        # column name -> tooltip


def runs_row(record: RunRecord, note: str = "") -> RunsRow:
    """``record``'s row: its name, parameters and final loss (blank when unknown), one name per
    corpus, and its whole folder path as the Folder cell's tooltip (the last column is cut at
    the panel's edge). ``note``: which checkpoint its weights came from when a newer one was
    damaged, marked in Status and said in full in its tooltip."""
    loss = f"{record.final_loss:.4f}" if record.final_loss is not None else ""
    params = f"{record.params:,}" if record.params else ""
    status = f"{record.status} ⚠ older checkpoint used" if note else record.status
    tips = {"Folder": record.path} | ({"Status": note} if note else {})
    return RunsRow([record.label, params, corpus_name(record.corpus), str(record.steps), loss,
                    status, record.path], tips)


def progress_format(label: str) -> str:
    """The progress bar's text for an opened run: its steps and its name, shortened to fit the
    controls column (Qt fills in %v and %m)."""
    return f"%v / %m steps ({short_name(label, PROGRESS_NAME_CHARS)})"
