"""State carried between calls while decoding incrementally (the KV cache)."""


class DecodingCache:
    """What a compiled model remembers between ``model(chunk, cache=cache)`` calls: ``offset``,
    the positions already consumed (the next chunk's first absolute position), a dict per stateful
    block from :meth:`state` (attention keys/values, a recurrent state, projected memory) and an
    encoder-decoder's encoder output in ``encoded`` (the source is read once)."""

    def __init__(self):
        self.offset = 0
        self.encoded = None
        self._states = {}

    def state(self, module) -> dict:
        """The dict in which ``module`` keeps its state across calls (created empty)."""
        return self._states.setdefault(module, {})
