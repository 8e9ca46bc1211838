"""Train and look inside: the GUI half of issue 5.

:class:`TrainingPanel` holds the run setup (corpus, tokenizer with a live preview,
hyper-parameters), the Train / Pause / Resume / Stop controls and the views: curves, attention,
positions, next token, experts and the run history. Training runs on a worker thread
(:mod:`.run_controller`); the views redraw from plain data on a timer, never per event.
:func:`attach` docks the panel into the editor's main window.
"""
from .panel import TrainingPanel

__all__ = ["TrainingPanel", "attach"]


def attach(main_window):
    """Dock a :class:`TrainingPanel` into the editor's main window (see :mod:`.attach`)."""
    from .attach import attach as _attach
    return _attach(main_window)
