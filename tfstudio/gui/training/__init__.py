"""Train and look inside: the GUI half of issue 5.

:class:`TrainingPanel` holds the run setup (corpus, tokenizer with a live preview,
hyper-parameters), the Train / Pause / Resume / Stop controls and the views: curves, attention,
positions, next token, experts and the run history. Training runs in a child process
(:mod:`.run_controller`, :mod:`tfstudio.train.child`); the views redraw from plain data on a
timer, never per event.
:func:`attach_training` docks the panel into the editor's main window (named apart from the
:mod:`.attach` submodule, which importing would otherwise put in its place on this package).

Importing this package is cheap (the editor imports it before its first paint); the panel and
its plotting library load when first used.
"""
from __future__ import annotations

__all__ = ["TrainingPanel", "attach_training"]


def attach_training(main_window):
    """Dock the training panel into the editor's main window (see :mod:`.attach`)."""
    from .attach import attach as _attach
    return _attach(main_window)


def __getattr__(name: str):
    if name == "TrainingPanel":
        from .panel import TrainingPanel
        return TrainingPanel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
