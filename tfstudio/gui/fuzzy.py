"""Fuzzy matching for search-to-add and the palette filter (pure Python).

A query matches a text when its letters appear in order ("lnorm" matches "layernorm"), and
aliases cover the words people use for a block ("ffn", "mlp" find Feed-forward). Matches at word
starts and in runs score higher, so initials ("ca" -> Cross-attention) find what people mean.
"""
from __future__ import annotations

from typing import Iterable

from ..graph.schema import BlockSpec

# Words people type for a block that are not in its name.
ALIASES = {
    "attention": "mha gqa mqa self attn causal",
    "cross_attention": "attn encoder decoder memory",
    "feed_forward": "ffn mlp dense swiglu gelu",
    "moe": "experts router mixture",
    "norm": "layernorm rmsnorm ln",
    "add": "residual skip sum plus",
    "positional_encoding": "pe sinusoidal learned position",
    "token_embedding": "embed wte vocab lookup",
    "lm_head": "logits output unembed",
    "group": "layer repeat block stack",
    "rnn": "lstm gru recurrent",
}


def fuzzy_score(query: str, text: str) -> float | None:
    """How well ``query`` matches ``text`` (higher is better), or None when it does not."""
    q = query.lower().replace(" ", "")
    t = text.lower()
    if not q:
        return 0.0
    if q in t:  # a plain substring beats any scattered match
        start = t.index(q)
        at_word = start == 0 or not t[start - 1].isalnum()
        return 100.0 + 10.0 * at_word - start * 0.1 + len(q)
    score, ti, run = 0.0, 0, 0
    for ch in q:
        found = t.find(ch, ti)
        if found < 0:
            return None
        run = run + 1 if found == ti else 0
        at_word = found == 0 or not t[found - 1].isalnum()
        score += 1.0 + 2.0 * run + 3.0 * at_word - 0.02 * (found - ti)
        ti = found + 1
    return score


def block_score(query: str, spec: BlockSpec) -> float | None:
    """The best match over a block's title, type, family and aliases; descriptions count less."""
    fields = (spec.title, spec.type, spec.family, ALIASES.get(spec.type, ""))
    scores = [s for s in (fuzzy_score(query, f) for f in fields) if s is not None]
    words = query.lower().split()
    if not scores and words and all(w in spec.description.lower() for w in words):
        scores.append(1.0)
    return max(scores) if scores else None


def rank_blocks(query: str, specs: Iterable[BlockSpec]) -> list[BlockSpec]:
    """Blocks matching ``query``, best first (ties keep catalogue order)."""
    scored = [(block_score(query, s), i, s) for i, s in enumerate(specs)]
    return [s for score, i, s in sorted(((sc, i, s) for sc, i, s in scored if sc is not None),
                                         key=lambda item: (-item[0], item[1]))]
