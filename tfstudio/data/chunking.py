"""Cutting a long text stream into pieces that tokenize exactly as the whole text would.

Byte-pair tokenizers of the GPT family (gpt2, cl100k, o200k and the pattern our BPE uses) first
split text with a regex into "pre-tokens" and merge bytes only inside each one. A cut between a
letter or digit and the whitespace after it is always a pre-token boundary in those patterns
(no alternative matches a letter or digit followed by whitespace), so encoding the two sides
separately gives the same ids as encoding the whole. Byte and character tokenizers are
indifferent to where text is cut.

A stretch of ``SEARCH_WINDOW`` characters with no such place (say, CJK text without spaces) is
cut hard; only that one boundary may then tokenize differently from the in-memory result.
"""
from __future__ import annotations

import re
from typing import Iterable, Iterator

SEARCH_WINDOW = 1 << 16
_BOUNDARY = re.compile(r"[^\W_]\s")  # a letter or digit (\p{L} or \p{N}), then whitespace


def safe_cut(text: str, limit: int) -> int:
    """The largest cut position <= ``limit`` that keeps pre-tokens whole, else ``limit``."""
    lo = max(0, limit - SEARCH_WINDOW)
    last = None
    for last in _BOUNDARY.finditer(text, lo, limit + 1):
        pass
    return last.start() + 1 if last is not None else limit


def rechunk(chunks: Iterable[str], size: int) -> Iterator[str]:
    """The text of ``chunks`` again, in pieces of at most about ``size`` characters, each cut
    at a pre-token boundary (see the module docstring)."""
    buffer = ""
    for chunk in chunks:
        buffer = buffer + chunk if buffer else chunk
        while len(buffer) > size:
            cut = safe_cut(buffer, size)
            yield buffer[:cut]
            buffer = buffer[cut:]
    if buffer:
        yield buffer
