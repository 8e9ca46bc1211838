"""Positions and length extrapolation: learned, sinusoidal, RoPE and ALiBi trained at 64 tokens
and evaluated to 256, each scheme's part of the seed's claim checked against its buckets."""
from __future__ import annotations

from ...graph.kinds import ALIBI, LEARNED, ROPE, SINUSOIDAL
from . import register
from .lesson import (FAILS, HOLDS, UNDECIDED, Check, Lesson, Paper, both, fact, higher, holm,
                     lower)
from .measures import bucket, final_loss, ratio, variants
from .training import LESSON_TRAINING

CLAIM = ("learned tables fail past max_len; sinusoidal \"runs\" but degrades; RoPE degrades "
         "gradually; ALiBi is the most stable.")
SCHEMES = (LEARNED, SINUSOIDAL, ROPE, ALIBI)
# the learned table's rows: the training length, so "past max_len" is past what it trained on
MAX_LEN = LESSON_TRAINING["seq_len"]


def judge(c) -> list[Check]:
    v = variants(c, "positions")
    if not set(SCHEMES) <= set(v):
        return [Check("All four schemes were trained", FAILS,
                      f"Only {', '.join(sorted(v)) or 'none'} finished; the claim needs "
                      f"{', '.join(SCHEMES)}.")]
    train = c.plan.config.seq_len
    names = _bucket_names(c)
    unigram, bigram = c.baselines.get("unigram"), c.baselines.get("bigram")
    checks = [_stands_alone(v, bigram)]
    last = len(names) - 1
    learned_jump = ratio(v["learned"], 1, 0)

    first_past = bucket(v["learned"], 1)
    if first_past is None:
        # a table of max_len rows has no row past it: the model cannot run there at all
        checks.append(fact("Learned positions fail past max_len", True,
                           f"The learned table has {MAX_LEN} rows, the training length "
                           f"({train}): past position {MAX_LEN - 1} the model cannot be "
                           "evaluated at all."))
    else:
        jump = higher(learned_jump, 1.0, digits=2).named(f"{names[1]} over {names[0]} against 1")
        above = higher(first_past, bigram).named(f"{names[1]} against the bigram counter")
        checks.append(Check(
            "Learned positions fail past the training length", both(jump, above),
            f"Learned: {bucket(v['learned'], 0).text()} at {names[0]}, "
            f"{first_past.text()} at {names[1]} ({learned_jump.text(2)} times), against the "
            f"bigram counter's {bigram:.3f}.", tests=(jump, above)))

    sin_jump, sin_past = ratio(v["sinusoidal"], 1, 0), bucket(v["sinusoidal"], 1)
    degrades = higher(sin_jump, 1.0, digits=2).named(f"{names[1]} over {names[0]} against 1")
    runs = lower(sin_past, unigram).named(f"{names[1]} against the unigram counter")
    checks.append(Check(
        "Sinusoidal positions run past the training length but degrade", both(degrades, runs),
        f"Sinusoidal: {sin_past.text()} at {names[1]}, {sin_jump.text(2)} times its loss at "
        f"{names[0]}; counting single characters gives {unigram:.3f}.", tests=(degrades, runs)))

    rope = [bucket(v["rope"], i) for i in range(len(names))]
    rope_jump = ratio(v["rope"], 1, 0)
    # every bucket past the training length below counting characters: one test per bucket,
    # Holm-corrected for their number
    readable = holm([lower(b, unigram).named(f"{n} against the unigram counter")
                     for b, n in zip(rope[1:], names[1:])])
    gradual = ([lower(rope_jump, learned_jump, digits=2).named("first step against learned's")]
               if learned_jump else [])
    worst = max(rope[1:], key=lambda b: b.mean)
    worst_test = readable[rope[1:].index(worst)]
    checks.append(Check(
        "RoPE degrades gradually", both(*gradual, *readable),
        f"RoPE: {', '.join(f'{b.text()} at {n}' for b, n in zip(rope, names))}; its first step "
        f"past {train} is {rope_jump.text(2)} times (learned: "
        f"{learned_jump.text(2) if learned_jump else 'no rows past ' + str(train)}), and its "
        f"worst bucket ({worst.mean:.3f}) is {_against(worst_test)} the unigram counter "
        f"({unigram:.3f}).", tests=(*gradual, *readable)))

    alibi = ratio(v["alibi"], last, 0)
    others = {s: ratio(v[s], last, 0) for s in SCHEMES if s != ALIBI}
    others = {s: r for s, r in others.items() if r is not None}
    steadier = holm([lower(alibi, r, digits=2).named(f"against {s}") for s, r in others.items()])
    checks.append(Check(
        "ALiBi is the most stable", both(*steadier),
        f"Loss at {names[last]} over loss at {names[0]}: ALiBi {alibi.text(2)}, " +
        ", ".join(f"{s} {r.text(2)}" for s, r in others.items()) + ".", tests=tuple(steadier)))
    return checks


def _stands_alone(v, bigram: float) -> Check:
    """Every scheme must learn more than counting character pairs, or the comparison is not
    fair to it (a sinusoidal table that drowns the token vectors, say)."""
    tests = {s: lower(final_loss(v[s]), bigram).named(s) for s in SCHEMES}
    behind = [s for s, t in tests.items() if t.outcome != HOLDS]
    words = ", ".join(f"{s} {final_loss(v[s]).text()}" for s in SCHEMES)
    tail = (" Each beats it." if not behind else
            f" Not clearly better: {', '.join(behind)}; a scheme that loses to counting pairs "
            "is not a fair contestant, so read its row with care.")
    return Check("Every scheme learns more than a bigram counter (a fair comparison)",
                 both(*tests.values()),
                 f"Validation loss: {words}; the bigram counter gives {bigram:.3f}.{tail}",
                 tests=tuple(tests.values()))


def _against(tested) -> str:
    return {HOLDS: "below", FAILS: "above", UNDECIDED: "not separated from"}[tested.outcome]


def _bucket_names(c) -> list[str]:
    """"positions 16-63", ...: the buckets as the length evaluation made them (the warm-up
    positions before the first one averaged apart)."""
    e = next((v.mean_lengths() for v in c.variants if v.mean_lengths() is not None), None)
    if e is not None:
        return [f"positions {name}" for name in e.bucket_names()]
    ends = c.plan.eval_lengths
    return [f"positions {a}-{b - 1}" for a, b in zip([0] + ends[:-1], ends)]


PAPER = Paper(
    "Press et al. 2022, Train Short, Test Long: Attention with Linear Biases (ALiBi)",
    "sinusoidal, rotary (RoPE) and T5-bias positions degrade as the evaluation length grows "
    "past the training length, ALiBi does not: a model trained on 1,024 tokens read 2,048 at "
    "the perplexity of a sinusoidal model trained on 2,048",
    "a 1.3-billion-parameter model, and models trained on WikiText-103 with L = 512 and 1,024",
    checks=("Sinusoidal positions run past the training length but degrade",
            "RoPE degrades gradually", "ALiBi is the most stable"))


register(Lesson(
    "positions", "Lesson: positions and length extrapolation", CLAIM,
    "project seed, section 3, Positional encodings: Extrapolation", "tiny-gpt",
    [("positions", list(SCHEMES))], LESSON_TRAINING, judge,
    base_edits=[("pos.max_len", str(MAX_LEN))], eval_lengths=[64, 128, 192, 256],
    papers=(PAPER,)))
