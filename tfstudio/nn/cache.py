"""State carried between calls while decoding incrementally (the KV cache)."""


class DecodingCache:
    """What a compiled model remembers between ``model(chunk, cache=cache)`` calls: ``offset``
    (the positions consumed: the next chunk's first), a dict per stateful block from :meth:`state`
    (keys/values, a recurrent state, projected memory), an encoder-decoder's ``encoded`` source."""

    def __init__(self):
        self.offset, self.encoded, self._states = 0, None, {}

    def state(self, module) -> dict:
        """The dict in which ``module`` keeps its state across calls (created empty)."""
        return self._states.setdefault(module, {})
