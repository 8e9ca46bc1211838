"""Turning logits into tokens: temperature, top-k, top-p, and a view of what each filter did.

Temperature divides the logits (0 means greedy: always the most likely token). Top-k keeps the k
most likely tokens (0 keeps all). Top-p keeps the smallest set of most likely tokens whose
probability adds up to at least p (1 keeps all). The filters apply in that order, and the kept
probabilities are renormalised.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch


def apply_filters(logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0,
                  top_p: float = 1.0) -> torch.Tensor:
    """Logits [..., V] after temperature, top-k and top-p; filtered entries are -inf.

    With temperature 0 only the argmax survives (greedy decoding)."""
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0; got {temperature}")
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1]; got {top_p}")
    if top_k < 0:
        raise ValueError(f"top_k must be >= 0 (0 keeps every token); got {top_k}")
    logits = logits.float()
    if temperature == 0:
        keep = logits == logits.max(dim=-1, keepdim=True).values
        # ties: keep only the first maximum so greedy is deterministic
        first = keep.int().cumsum(-1) == 1
        return logits.masked_fill(~(keep & first), float("-inf"))
    logits = logits / temperature
    if 0 < top_k < logits.size(-1):
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
        probs = torch.softmax(sorted_logits, dim=-1)
        # drop a token when the tokens ranked above it already reach p
        before = probs.cumsum(-1) - probs
        drop_sorted = before >= top_p
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        logits = logits.masked_fill(drop, float("-inf"))
    return logits


def sample_next(logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0,
                top_p: float = 1.0, generator: torch.Generator | None = None) -> torch.Tensor:
    """One token id per row of ``logits`` [B, V] -> [B]."""
    filtered = apply_filters(logits, temperature, top_k, top_p)
    if temperature == 0:
        return filtered.argmax(dim=-1)
    probs = torch.softmax(filtered, dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


@dataclass
class Candidate:
    token_id: int
    text: str
    prob: float            # the model's own probability (temperature 1, no filter)
    prob_tempered: float   # after temperature only
    prob_final: float      # after every filter, renormalised (0 when filtered out)
    filtered_by: str       # "" when kept, else "top-k" or "top-p"


@dataclass
class NextTokenView:
    candidates: list[Candidate]
    temperature: float
    top_k: int
    top_p: float
    kept: int              # how many vocabulary entries survive the filters
    entropy: float         # of the final distribution, in nats


def next_token_view(logits: torch.Tensor, decode=None, temperature: float = 1.0,
                    top_k: int = 0, top_p: float = 1.0, n: int = 20) -> NextTokenView:
    """The top ``n`` candidates for a single position (``logits`` [V]) with their probabilities
    before and after each filter; ``decode(id) -> str`` names them."""
    logits = logits.detach().float().reshape(-1)
    base = torch.softmax(logits, -1)
    tempered = base if temperature in (0, 1) else torch.softmax(logits / temperature, -1)
    after_k = apply_filters(logits, temperature, top_k, 1.0)
    final_logits = apply_filters(logits, temperature, top_k, top_p)
    final = torch.softmax(final_logits, -1)
    order = torch.argsort(base, descending=True)[:n]
    cands = []
    for tid in order.tolist():
        if torch.isinf(after_k[tid]):
            why = "top-k" if temperature != 0 else "greedy"
        elif torch.isinf(final_logits[tid]):
            why = "top-p"
        else:
            why = ""
        cands.append(Candidate(tid, decode(tid) if decode else str(tid), float(base[tid]),
                               float(tempered[tid]), float(final[tid]), why))
    nz = final[final > 0]
    return NextTokenView(cands, temperature, top_k, top_p, int((final > 0).sum()),
                         float(-(nz * nz.log()).sum()))
