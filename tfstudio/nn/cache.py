"""State carried between calls while decoding incrementally (the KV cache)."""


class DecodingCache:
    """What a compiled model remembers between ``model(chunk, cache=cache)`` calls.

    ``offset`` counts the positions already consumed on the decoding stream, so the next chunk's
    tokens sit at absolute positions ``offset, offset + 1, ...`` (RoPE, ALiBi, sliding windows and
    position tables all use it). Each stateful block (attention keys/values, a recurrent state,
    cross-attention's projected memory) keeps a private dict from :meth:`state`. An
    encoder-decoder keeps its encoder output in ``encoded``: the source is read once, on the first
    call, and later calls reuse it.
    """

    def __init__(self):
        self.offset = 0
        self.encoded = None
        self._states = {}

    def state(self, module) -> dict:
        """The dict in which ``module`` keeps its state across calls (created empty)."""
        return self._states.setdefault(module, {})
