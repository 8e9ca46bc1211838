"""The exception the data layer raises for bad input; its message names the problem and the fix."""
from __future__ import annotations


class DataError(ValueError):
    """A corpus, tokenizer or setting that cannot be used as asked (the message says the fix)."""
