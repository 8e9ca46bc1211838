"""Fuzzy matching for search-to-add and the palette filter (pure Python).

A query matches a text when its letters appear in order ("lnorm" matches "layernorm"), and each
block type's ``keywords`` (in its schema module) cover the words people use for it ("ffn", "mlp"
find Feed-forward; "rope", "gqa", "kv" find Self-attention). A whole word outranks the start of
one, which outranks initials, a piece inside a word, then scattered letters, so "rope" finds the
attention that has it and not "Mixture of expe(r)ts (r)o(u)ter" whose letters spell it.
"""
from __future__ import annotations

import re
from typing import Iterable

from ..graph.schema import BlockSpec

WHOLE_WORD = 200.0
ALL_WORDS = 150.0
WORD_START = 100.0
CLOSE_MATCH = 40.0  # fuzzy_score's tier for a substring, a word start or initials


def _words(text: str) -> set[str]:
    """The words of ``text``: "pre-norm" gives "pre-norm", "pre" and "norm"."""
    tokens = [w for w in re.split(r"[^a-z0-9-]+", text.lower()) if w]
    return set(tokens) | {part for w in tokens for part in w.split("-") if part}


def fuzzy_score(query: str, text: str) -> float | None:
    """How well ``query`` matches ``text`` (higher is better), or None when it does not.

    Tiers: the query is a whole word of the text (200+); every word of a several-word query
    starts a word of it (150+, "sliding window"); a substring at a word start (100+); initials
    of words (70+); a substring inside a word (40+); then letters scattered in order (under
    40)."""
    q = query.lower().replace(" ", "")
    t = text.lower()
    if not q:
        return 0.0
    words = query.lower().split()
    if len(words) == 1 and words[0] in _words(t):
        return WHOLE_WORD + len(q)
    if len(words) > 1:
        parts = [fuzzy_score(w, t) for w in words]
        if all(p is not None and p >= WORD_START for p in parts):
            return ALL_WORDS + len(q)
    if q in t:
        start = t.index(q)
        if start == 0 or not t[start - 1].isalnum():
            return WORD_START + len(q) - start * 0.01
    score, ti, run, all_starts = 0.0, 0, 0, True
    for ch in q:
        found = t.find(ch, ti)
        if found < 0:
            return None
        run = run + 1 if found == ti else 0
        at_word = found == 0 or not t[found - 1].isalnum()
        all_starts = all_starts and at_word
        score += 1.0 + 2.0 * run + 3.0 * at_word - 0.02 * (found - ti)
        ti = found + 1
    if all_starts:
        return 70.0 + len(q)
    if q in t:
        return 40.0 + len(q) - t.index(q) * 0.01
    return min(score, 39.0)


def block_score(query: str, spec: BlockSpec, descriptions: bool = True) -> float | None:
    """The best match over a block's title, type, family and keywords; with ``descriptions``,
    a block whose description contains every word of the query matches too, ranked last."""
    fields = (spec.title, spec.type, spec.family, spec.keywords)
    scores = [s for s in (fuzzy_score(query, f) for f in fields) if s is not None]
    words = query.lower().split()
    if (descriptions and not scores and words
            and all(w in spec.description.lower() for w in words)):
        scores.append(1.0)
    return max(scores) if scores else None


def palette_matches(query: str, specs: Iterable[BlockSpec]) -> dict[str, float]:
    """The palette's blocks for ``query`` (titles, types, families, keywords; no
    descriptions), by type with their score: the blocks that have it as a whole word when any
    do, else close matches (a word's start, initials), else every letters-in-order match."""
    scores = {spec.type: score for spec in specs
              if (score := block_score(query, spec, descriptions=False)) is not None}
    for tier in (WHOLE_WORD, CLOSE_MATCH):
        if any(v >= tier for v in scores.values()):
            return {k: v for k, v in scores.items() if v >= tier}
    return scores


def names_a_word(query: str, *texts: str) -> bool:
    """Whether some word of ``query`` is spelled out whole in one of ``texts`` (not only
    its letters scattered in order)."""
    words = [w for w in query.lower().split() if w]
    return any(w in t.lower() for w in words for t in texts)


def _names_a_word_of(query: str, spec: BlockSpec) -> bool:
    return names_a_word(query, spec.title, spec.type, spec.family, spec.keywords,
                        spec.description)


def rank_blocks(query: str, specs: Iterable[BlockSpec]) -> list[BlockSpec]:
    """Blocks matching ``query``, best first (ties keep catalogue order). When any block has
    a word of the query spelled out, blocks whose letters merely spell it in order are left
    out ("rope" lists no Mixture of expe(r)ts (r)o(u)ter); a typo still finds its block."""
    scored = [(sc, i, s) for i, s in enumerate(specs)
              if (sc := block_score(query, s)) is not None]
    worded = [item for item in scored if _names_a_word_of(query, item[2])]
    return [s for _, _, s in sorted(worded or scored, key=lambda item: (-item[0], item[1]))]
