"""ReLU, GELU, SwiGLU and GEGLU at equal parameter count: a gated FFN has three matrices where
a plain one has two, so its inner width is cut to 2/3 (Shazeer 2020), and all four train on the
same budget."""
from __future__ import annotations

from ...graph.kinds import ACTIVATION_LABELS, GATED, GEGLU, GELU, RELU, SWIGLU
from ...graph import block_types as bt
from . import register
from .course import blocks, setting
from .lesson import FAILS, HOLDS, UNDECIDED, Check, Lesson, lower
from .measures import final_loss, variants
from .training import LESSON_TRAINING

KEY = "ffn_activation"
KINDS = (RELU, GELU, SWIGLU, GEGLU)
NAMES = {k: ACTIVATION_LABELS[k] for k in KINDS}
CLAIM = ("gated feed-forward layers (SwiGLU, GEGLU) reach a lower loss than ReLU or GELU at the "
         "same parameter count, which is why LLaMA-style blocks use SwiGLU with d_ff cut to 2/3.")
EQUAL = 0.01   # parameter counts within 1% count as equal


@setting(KEY, KINDS)
def ffn_activation(graph, kind: str):
    """Every FFN with activation ``kind``; a gated one with its inner width times 2/3."""
    out = graph.clone()
    for node in blocks(out, bt.FEED_FORWARD):
        if kind in GATED:
            node.params["d_ff"] = max(1, round(node.typed_params().d_ff * 2 / 3))
        node.params["activation"] = kind
    return out


def judge(c) -> list[Check]:
    v = variants(c, KEY)
    if not set(KINDS) <= set(v):
        return [Check("ReLU, GELU, SwiGLU and GEGLU were trained", FAILS,
                      f"Only {', '.join(sorted(v)) or 'none'} finished.")]
    params = {k: v[k].params for k in KINDS}
    gap = (max(params.values()) - min(params.values())) / min(params.values())
    counts = ", ".join(f"{NAMES[k]} {params[k]:,}" for k in KINDS)
    checks = [Check("The four variants have the same parameter count",
                    HOLDS if gap <= EQUAL else FAILS,
                    f"Parameters: {counts} ({gap:.1%} apart; within {EQUAL:.0%} counts as "
                    "equal).")]
    loss = {k: final_loss(v[k]) for k in KINDS}
    words = {HOLDS: "lower by more than the spread", FAILS: "higher by more than the spread",
             UNDECIDED: "within the spread"}
    for gated in (SWIGLU, GEGLU):
        for plain in (RELU, GELU):
            outcome = lower(loss[gated], loss[plain])
            checks.append(Check(
                f"{NAMES[gated]} beats {NAMES[plain]}", outcome,
                f"Validation loss {NAMES[gated]} {loss[gated].text()} against {NAMES[plain]} "
                f"{loss[plain].text()}: {words[outcome]}."))
    return checks


register(Lesson(
    "activations", "Lesson: ReLU, GELU, SwiGLU and GEGLU at equal parameters", CLAIM,
    "project seed, the modern block (SwiGLU)", "tiny-gpt",
    [(KEY, list(KINDS))], LESSON_TRAINING, judge))
