"""The block catalogue. Importing this package registers every family's schema (no torch)."""
from . import (attention, embedding, feedforward, group, io, norm, output, position,  # noqa: F401
               recurrent, residual, window)
from .output import HEAD_TYPES  # noqa: F401
