"""Multi-head, grouped-query and multi-query attention: the KV cache each keeps, measured on the
cache tensors, against the quality each reaches over the seeds."""
from __future__ import annotations

from . import register
from .lesson import FAILS, HOLDS, UNDECIDED, Check, Lesson, higher
from .measures import final_loss, kv_bytes, variants
from .training import LESSON_TRAINING

CLAIM = ("the KV cache per token is 2 x layers x kv_heads x head_dim x bytes, which is why "
         "MQA/GQA exist: fewer K/V heads shrink it, GQA the middle ground between MHA and MQA.")
KINDS = ("mha", "gqa", "mqa")


def judge(c) -> list[Check]:
    v = variants(c, "attention")
    if not set(KINDS) <= set(v):
        return [Check("MHA, GQA and MQA were trained", FAILS,
                      f"Only {', '.join(sorted(v)) or 'none'} finished.")]
    checks = []
    kv = {k: kv_bytes(v[k]) for k in KINDS}
    if None not in kv.values():
        dtype = next(r.inference.dtype for r in v["mha"].runs if r.inference is not None)
        context = next(r.inference.context_length for r in v["mha"].runs
                       if r.inference is not None)
        shrinks = kv["mha"] > kv["gqa"] > kv["mqa"]
        checks.append(Check(
            "Fewer K/V heads shrink the KV cache", HOLDS if shrinks else FAILS,
            f"Measured on the cache tensors after {context} tokens ({dtype}): MHA "
            f"{kv['mha']:,} bytes, GQA {kv['gqa']:,}, MQA {kv['mqa']:,}; "
            f"{kv['mha'] / kv['mqa']:.3g}:{kv['gqa'] / kv['mqa']:.3g}:1."))
    loss = {k: final_loss(v[k]) for k in KINDS}
    seen = f"Validation loss: MHA {loss['mha'].text()}, GQA {loss['gqa'].text()}, " \
           f"MQA {loss['mqa'].text()}."
    cost = higher(loss["mqa"], loss["mha"])
    cost_words = {HOLDS: "MQA pays for its smaller cache in quality",
                  FAILS: "MQA came out better than MHA, so sharing K/V cost nothing here",
                  UNDECIDED: "the gap between MQA and MHA is within the seeds' spread, so no "
                             "quality cost is shown"}[cost]
    checks.append(Check("Sharing K/V heads costs some quality", cost,
                        f"{seen} {cost_words}."))
    if loss["gqa"].spread is None:
        middle = UNDECIDED
    else:
        middle = FAILS if higher(loss["gqa"], loss["mha"]) == HOLDS else HOLDS
    middle_words = {HOLDS: "GQA keeps MHA's quality within the spread with a smaller cache",
                    FAILS: "GQA is worse than MHA by more than the spread",
                    UNDECIDED: "one seed cannot tell"}[middle]
    checks.append(Check("GQA is the middle ground (MHA's quality, a smaller cache)", middle,
                        f"GQA {loss['gqa'].text()} against MHA {loss['mha'].text()}: "
                        f"{middle_words}."))
    return checks


register(Lesson(
    "attention", "Lesson: multi-head, grouped-query and multi-query attention", CLAIM,
    "project seed, section 3, Attention", "tiny-gpt",
    [("attention", list(KINDS))], LESSON_TRAINING, judge))
