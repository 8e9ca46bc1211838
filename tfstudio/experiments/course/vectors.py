"""Static against contextual vectors (word2vec -> ELMo), measured.

A token's input vector is a row of the embedding table: the same in every sentence (static).
The residual stream after each layer has mixed in the context, so the same word's vectors drift
apart layer by layer (contextual). Drift is the mean cosine distance (1 - cos) over pairs of the
word's occurrences, read where the logit lens reads the stream (``probes.embeddings``). Two
yardsticks:

- between words: the same distance over pairs of occurrences of *different* words, layer by layer.
  A word whose drift nears it is told apart by its context as much as by its identity.
- same position: the occurrences cut so that the word sits at the same position in each (the
  same number of tokens before it). An absolute position table gives the word a different input
  at a different position; with positions equal, what drift is left comes from the context alone.

A word is followed at its last token (for a byte or character tokenizer, its last letter), so any
tokenizer that encodes a text's prefix as a prefix of the text's encoding works.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

import numpy as np

from ...probes.embeddings import cosine_matrix, embedding_table, stream_vectors
from ...probes.inputs import ProbeInputs


@dataclass(frozen=True)
class Occurrence:
    """A word in one text: the text's token ids and the position of the word's last token."""
    word: str
    ids: tuple[int, ...]
    position: int


def find_occurrences(tokenizer, texts: Sequence[str], word: str) -> list[Occurrence]:
    """Every whole-word occurrence of ``word`` in ``texts``."""
    found = []
    for text in texts:
        ids = tuple(tokenizer.encode(text))
        for match in re.finditer(rf"\b{re.escape(word)}\b", text):
            position = len(tokenizer.encode(text[:match.end()])) - 1
            if position >= 0:
                found.append(Occurrence(word, ids, position))
    return found


def same_position(occurrences: Sequence[Occurrence]) -> list[Occurrence]:
    """The occurrences cut at the front so that each has the word at the same position (the
    smallest among them): the same word, the same position, different contexts."""
    if not occurrences:
        return []
    p = min(o.position for o in occurrences)
    return [Occurrence(o.word, o.ids[o.position - p:], p) for o in occurrences]


def layer_vectors(model, occurrences: Sequence[Occurrence]) -> tuple[list[str], np.ndarray]:
    """(layer labels, [occurrences, layers, d]): each occurrence's token embedding, then the
    residual stream entering the layers and after each (a decoder's single token stream)."""
    import torch

    if model.family != "decoder":
        raise ValueError("the vectors lesson follows a decoder's token stream; this model is "
                         f"a {model.family}")
    device = next(model.parameters()).device
    labels, rows = [], []
    for o in occurrences:
        inputs = ProbeInputs((torch.tensor([list(o.ids)], device=device),),
                             {"tokens": list(o.ids)}, {"tokens": []}, "tokens")
        labels, vectors = stream_vectors(model, inputs, o.position)
        rows.append(vectors)
    return labels, np.stack(rows) if rows else np.zeros((0, 0, 0))


def mean_pair_distance(a: np.ndarray, b: np.ndarray | None = None) -> float:
    """Mean of 1 - cos over pairs: within ``a`` [n, d] (i < j), or across ``a`` and ``b``."""
    if b is None:
        if len(a) < 2:
            raise ValueError("a distance within one set needs at least 2 vectors")
        cos = cosine_matrix(a, a)[np.triu_indices(len(a), 1)]
    else:
        cos = cosine_matrix(a, b).ravel()
    return max(0.0, float(np.mean(1.0 - cos)))  # 1 - cos >= 0; rounding can dip below


@dataclass
class Drift:
    """Per layer (``layers`` labels them): the same word's drift, the spread between different
    words, and the same word's drift with its position held fixed."""
    layers: list[str]
    same_word: list[float]
    between_words: list[float]
    same_position: list[float]
    words: list[str]

    def share_of_spread(self) -> list[float]:
        """Drift as a share of the spread between words, per layer (0: static)."""
        return [s / b if b > 0 else 0.0 for s, b in zip(self.same_word, self.between_words)]


def within_and_between(groups: Sequence[np.ndarray]) -> tuple[list[float], list[float]]:
    """For groups of one word's vectors [n_w, layers, d]: per layer the mean distance over
    pairs of the same word (pooled over words, each pair counted once) and over pairs of
    different words."""
    layers = groups[0].shape[1]
    within, between = [], []
    for layer in range(layers):
        same = [(mean_pair_distance(g[:, layer]), len(g) * (len(g) - 1) // 2)
                for g in groups if len(g) >= 2]
        across = [(mean_pair_distance(a[:, layer], b[:, layer]), len(a) * len(b))
                  for a, b in combinations(groups, 2)]
        within.append(_weighted(same))
        between.append(_weighted(across))
    return within, between


def _weighted(pairs: list[tuple[float, int]]) -> float:
    total = sum(n for _, n in pairs)
    return sum(v * n for v, n in pairs) / total if total else float("nan")


def contextual_drift(model, tokenizer, texts: Sequence[str], words: Sequence[str]) -> Drift:
    """The drift of each word of ``words`` across ``texts``, against the spread between the
    words and against itself at a fixed position. Each word needs two occurrences."""
    found = {w: find_occurrences(tokenizer, texts, w) for w in words}
    short = [w for w, occ in found.items() if len(occ) < 2]
    if short:
        raise ValueError(f"{', '.join(repr(w) for w in short)} must occur at least twice in the "
                         "texts to measure drift; add sentences that use it")
    labels, groups, fixed = [], [], []
    for w in words:
        labels, vectors = layer_vectors(model, found[w])
        groups.append(vectors)
        fixed.append(layer_vectors(model, same_position(found[w]))[1])
    same, between = within_and_between(groups)
    held, _ = within_and_between(fixed)
    return Drift(labels, same, between, held, list(words))


def nearest_tokens(table: np.ndarray, ids: Sequence[int], k: int = 5
                   ) -> dict[int, list[tuple[int, float]]]:
    """For each id, the ``k`` other rows of ``table`` [vocab, d] most alike by cosine, with
    their cosines, nearest first (word2vec's view: one fixed vector per token)."""
    cos = cosine_matrix(table[list(ids)], table)
    out = {}
    for row, i in zip(cos, ids):
        row = row.copy()
        row[i] = -np.inf
        order = np.argsort(-row, kind="stable")[:k]
        out[int(i)] = [(int(j), float(row[j])) for j in order]
    return out


def static_neighbours(model, tokenizer, tokens: Sequence[str], k: int = 5
                      ) -> dict[str, list[tuple[str, float]]]:
    """:func:`nearest_tokens` of the model's embedding table for tokens given as text (each
    must encode to one token), named by the tokenizer."""
    table = embedding_table(model)
    out = {}
    for text in tokens:
        ids = tokenizer.encode(text)
        if len(ids) != 1:
            raise ValueError(f"{text!r} is {len(ids)} tokens for this tokenizer; the embedding "
                             "table has a row per token, so give single tokens")
        near = nearest_tokens(table, ids, k)[ids[0]]
        names = tokenizer.token_strings([j for j, _ in near])
        out[text] = [(name, c) for name, (_, c) in zip(names, near)]
    return out
