"""The probe text as model inputs.

Decoders and encoders read the text's tokens. An encoder-decoder reads a source and a target:
the text is split at the first separator (">" as in the synthetic tasks, "source>target"), or in
half when it has none, and the target starts with the tokenizer's BOS as in training.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from ..graph.kinds import LEARNED

DEFAULT_SEPARATOR = ">"
DEFAULT_MAX_TOKENS = 64
FALLBACK_TEXT = "The quick brown fox jumps over the lazy dog."


@dataclass
class ProbeInputs:
    args: tuple                      # tensors to call the model with
    ids: dict[str, list[int]]        # per role ("tokens", or "source" and "target")
    tokens: dict[str, list[str]]     # display strings of the same ids
    stream_role: str                 # the role whose last position predicts the next token


def max_positions(model) -> int | None:
    """The longest input a learned position table allows (None: no limit)."""
    limits = [m.max_len for _, m in model.blocks()
              if getattr(m, "scheme", None) == LEARNED and hasattr(m, "max_len")]
    return min(limits) if limits else None


def probe_inputs(model, tokenizer, text: str, max_tokens: int = DEFAULT_MAX_TOKENS,
                 separator: str = DEFAULT_SEPARATOR) -> ProbeInputs:
    """Encode ``text`` for ``model`` (at most ``max_tokens`` per stream, and never past a
    learned position table)."""
    import torch

    if not text or not text.strip():
        raise ValueError("the probe text is empty; type a few words (or a task example such "
                         "as abcdefgh>hgfedcba) to look inside the model")
    limit = max(1, min(max_tokens, max_positions(model) or max_tokens))
    device = next(model.parameters()).device

    def tensor(ids: list[int]):
        return torch.tensor([ids], dtype=torch.long, device=device)

    if model.family == "encoder-decoder":
        if separator and separator in text:
            source_text, target_text = text.split(separator, 1)
        else:
            half = len(text) // 2
            source_text, target_text = text[:half], text[half:]
        source = tokenizer.encode(source_text)[:limit] or [tokenizer.eot_id]
        target = ([tokenizer.bos_id] + tokenizer.encode(target_text))[:limit]
        ids = {"source": source, "target": target}
        args = (tensor(source), tensor(target))
        role = "target"
    else:
        encoded = tokenizer.encode(text)[:limit]
        ids = {"tokens": encoded}
        args = (tensor(encoded),)
        role = "tokens"
    tokens = {r: tokenizer.token_strings(v) for r, v in ids.items()}
    return ProbeInputs(args, ids, tokens, role)


def default_probe_text(corpus=None, tokenizer=None, max_chars: int = 48) -> str:
    """A sensible probe text: a fixed example of a synthetic task, else the corpus's opening
    words (cut at a word boundary), else a pangram."""
    task = getattr(corpus, "task", None)
    if task is not None:
        return task.example(random.Random(2024)).text.rstrip("\n")
    if corpus is not None:
        try:
            for document in corpus.documents():
                head = "".join(_take(document, max_chars * 4)).strip()
                if head:
                    cut = head[:max_chars]
                    return cut.rsplit(" ", 1)[0] if " " in cut[max_chars // 2:] else cut
        except (OSError, ValueError):
            pass
    return FALLBACK_TEXT


def _take(chunks, n: int):
    got = 0
    for chunk in chunks:
        yield chunk[: n - got]
        got += len(chunk)
        if got >= n:
            return
