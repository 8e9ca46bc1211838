"""The old home of the pieces the training views share, kept so that code written against it
(other branches, the Explain view) still imports: each piece now lives in a module of its own
job — :mod:`.colours`, :mod:`.labels`, :mod:`.picture_export`, :mod:`.background`. New code
imports from those."""
from __future__ import annotations

from .background import Background, GuiThreadGarbageCollector
from .colours import (SERIES_COLOURS, colour_ramp, ramp_colour, series_colour,
                      themed_colour)
from .labels import display_token, muted, placeholder
from .picture_export import SAVE_DIALOG, ExportButton, ask_save_path, export_widget

__all__ = ["SERIES_COLOURS", "Background", "ExportButton", "GuiThreadGarbageCollector",
           "SAVE_DIALOG", "ask_save_path", "colour_ramp", "display_token", "export_widget",
           "muted", "placeholder", "ramp_colour", "series_colour", "themed_colour"]
