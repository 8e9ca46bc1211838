"""The open document without Qt: its graph, undo history, file name, and the graph report.

Every widget edits through :meth:`Session.execute`, which turns a refused edit into a message
instead of an exception, and every change asks for one new report (coalesced, so a paste of
twenty nodes re-validates once, right after the paste). Views hear of it through plain
listeners (:class:`Listeners`); ``session.EditorSession`` re-emits them as Qt signals and runs
the deferred work on zero-interval timers, where tests run it with :meth:`Session.flush`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Protocol

from ..graph import (Document, Edit, Graph, GraphError, GraphEvent, kept_tidy, load_graph_file,
                     save_graph)
from ..graph.compare import model_signature
from ..graph.layout import untangled
from .editor_state import history_line
from .file_lines import saved_meta
from .graph_report import GraphReport, report_on_graph
from .text import sentence


class Listeners:
    """The functions told of one kind of event, in the order they connected."""

    def __init__(self) -> None:
        self._fns: list[Callable[..., Any]] = []

    def connect(self, fn: Callable[..., Any]) -> None:
        self._fns.append(fn)

    def emit(self, *args: Any) -> None:
        for fn in list(self._fns):
            fn(*args)


class Later(Protocol):
    """Work run once, later: ``start`` asks for it (again), ``stop`` takes the request back."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


class Pending:
    """A :class:`Later` that runs when flushed (the default, where no event loop runs)."""

    def __init__(self, work: Callable[[], Any]):
        self.work = work
        self.active = False

    def start(self) -> None:
        self.active = True

    def stop(self) -> None:
        self.active = False

    def flush(self) -> None:
        if self.active:
            self.active = False
            self.work()


class Session:
    """The document being edited and every rule about it; ``later`` makes the deferred work
    (the report, and the history's news for edits made on the document directly)."""

    def __init__(self, graph: Graph | None = None,
                 later: Callable[[Callable[[], Any]], Later] = Pending):
        self.report_ready = Listeners()      # GraphReport
        self.message = Listeners()           # feedback for the status bar (a refusal says why)
        self.state_changed = Listeners()     # file name or unsaved state changed
        self.history_changed = Listeners()   # after an edit, undo or redo has fully happened
        self.document = Document(untangled(graph) if graph is not None else Graph())
        self._loaded = model_signature(self.document.root)  # to tell an edited graph
        self.file_path: Path | None = None
        self.report = GraphReport()
        self._report_later = later(self.refresh_report)
        # for edits made on the document directly (not through execute/undo/redo)
        self._after_later = later(self._after_change)
        self._was_dirty = False
        self._recovered = False  # a recovered autosave counts as unsaved until saved
        # asked before every edit, undo and redo (the command, None for undo/redo): a reason
        # refuses it; the training panel refuses edits while a run trains (gui.training)
        self.edit_guard: Callable[[Edit | None], str | None] | None = None
        self.document.subscribe(self._on_event)
        self.refresh_report()

    def flush(self) -> None:
        """Do the deferred work now, the report first, as the timers would (only work made
        by the default :class:`Pending`: an adapter's timers run their own)."""
        for later in (self._report_later, self._after_later):
            if isinstance(later, Pending):
                later.flush()

    # ------------------------------------------------------------------ editing
    @property
    def root(self) -> Graph:
        return self.document.root

    def execute(self, command: Edit) -> bool:
        """Run an edit; a refused one (bad wire, bad value) becomes a message, not a crash.
        Either way the status bar is told, so it never keeps a sentence about an earlier state
        (a caller with more to say, "Added Norm", says it after)."""
        refusal = self.try_execute(command)
        self.message.emit(refusal or command.text)
        return refusal is None

    def try_execute(self, command: Edit) -> str | None:
        """Run an edit; None when done, else why it was refused (nothing changed then)."""
        refusal = self._guard(command)
        if refusal:
            return refusal
        try:
            self.document.execute(kept_tidy(command))  # a rewrite leaves no blocks overlapping
        except (GraphError, ValueError, KeyError) as exc:
            return sentence(exc)
        finally:
            self._after_change()
        return None

    def set_edit_guard(self, guard: Callable[[Edit | None], str | None] | None) -> None:
        self.edit_guard = guard

    def _guard(self, command: Edit | None) -> str | None:
        return self.edit_guard(command) if self.edit_guard is not None else None

    def undo(self) -> bool:
        return self._step(undo=True)

    def redo(self) -> bool:
        return self._step(undo=False)

    def _step(self, undo: bool) -> bool:
        """Undo or redo one step, unless the guard refuses; the status bar is told either way."""
        refusal = self._guard(None)
        if refusal:
            self.message.emit(refusal)
            return False
        doc = self.document
        text = doc.undo_text if undo else doc.redo_text
        done = doc.undo() if undo else doc.redo()
        self._after_change()
        self.message.emit(history_line(undo, text, done))
        return done

    def _on_event(self, event: GraphEvent) -> None:
        # the document emits while a command runs, before its history moves: look again after
        self._report_later.start()
        self._after_later.start()

    def _after_change(self) -> None:
        self._after_later.stop()
        self.history_changed.emit()
        if self.dirty != self._was_dirty:
            self._was_dirty = self.dirty
            self.state_changed.emit()

    def refresh_report(self) -> GraphReport:
        """Re-validate now (the deferred work does this; tests may call it directly)."""
        self._report_later.stop()
        self.report = report_on_graph(self.document.root)
        self.report_ready.emit(self.report)
        return self.report

    # ------------------------------------------------------------------ files
    @property
    def dirty(self) -> bool:
        return self.document.dirty or self._recovered

    @property
    def edited(self) -> bool:
        """Whether the model differs from the one opened (layout and labels aside)."""
        return model_signature(self.root) != self._loaded

    @property
    def display_name(self) -> str:
        if self.file_path is not None:
            return self.file_path.name
        return str(self.root.meta.get("name") or "untitled")

    def replace(self, graph: Graph, file_path: Path | None = None, dirty: bool = False) -> None:
        """Start over on ``graph`` (new, open, recover): history cleared. ``dirty`` marks a
        graph that exists in no file yet (a recovered autosave)."""
        self.file_path = Path(file_path) if file_path else None
        self._recovered = dirty
        self.document.reset(untangled(graph))  # blocks that would overlap are laid out
        self._loaded = model_signature(self.document.root)
        self._was_dirty = self.dirty
        self.history_changed.emit()
        self.state_changed.emit()
        self.refresh_report()

    def open(self, path: str | Path) -> None:
        """Load a graph file; raises GraphFileError (with the reason) when it cannot."""
        graph = load_graph_file(path)
        self.replace(graph, Path(path))

    def save(self, path: str | Path | None = None) -> Path:
        target = Path(path) if path is not None else self.file_path
        if target is None:
            raise GraphError("this graph has no file yet; use Save As")
        self.root.meta.update(saved_meta(self.root, target.stem, self.edited))
        save_graph(self.root, target)
        self.file_path = target
        self.document.mark_clean()
        self._recovered = False
        self._was_dirty = False
        self.state_changed.emit()
        return target
