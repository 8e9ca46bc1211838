"""GPT-1 to GPT-3's bet in miniature: the same model at several widths on a fixed token budget,
loss against parameters with a fitted power law, and what each width cost in tokens/s."""
from __future__ import annotations

from ...graph import block_types as bt
from ..course.scale import (Curvature, PowerLaw, fit_curvature, fit_power_law, fit_with_floor,
                            local_exponents)
from . import register
from .course import blocks, setting
from .lesson import FAILS, HOLDS, UNDECIDED, Check, Lesson, Paper, Test, lower
from .measures import final_loss, variants
from .training import LESSON_TRAINING

KEY = "width"
WIDTHS = ("32", "48", "64", "96", "128")
CLAIM = ("at a fixed token budget, loss falls as a power of the parameter count "
         "(L = a N^-alpha, Kaplan et al. 2020), the bet GPT-2 and GPT-3 made by scaling up.")


@setting(KEY, WIDTHS)
def width(graph, value: str):
    """The model ``value`` wide: every token embedding's d_model, and every FFN 4x as wide
    (the attention keeps its heads, so each head is width / heads wide)."""
    d = int(value)
    out = graph.clone()
    for node in blocks(out, bt.TOKEN_EMBEDDING):
        node.params["d_model"] = d
    for node in blocks(out, bt.FEED_FORWARD, bt.MOE):
        node.params["d_ff"] = 4 * d
    return out


def runs(c) -> tuple[list[str], list[int], list[float]]:
    """(the widths trained, each run's parameter count, each run's final validation loss)."""
    v = variants(c, KEY)
    done = [w for w in WIDTHS if w in v and v[w].val_losses]
    return (done, [v[w].params for w in done for _ in v[w].val_losses],
            [loss for w in done for loss in v[w].val_losses])


def judge(c) -> list[Check]:
    v = variants(c, KEY)
    done, params, losses = runs(c)
    if len(done) < 3:
        return [Check("At least three widths were trained", FAILS,
                      f"Only {', '.join(done) or 'none'} finished; a fit needs three.")]
    try:
        fit, bend = fit_power_law(params, losses), fit_curvature(params, losses)
    except ValueError as exc:
        return [Check("Loss falls as a power of parameters", FAILS, f"No fit: {exc}.")]
    table = "; ".join(f"{w} wide: {v[w].params:,} parameters, loss {final_loss(v[w]).text()}, "
                      f"{v[w].tokens_per_s:,.0f} tokens/s" for w in done)
    smallest, largest = done[0], done[-1]
    bigger = lower(final_loss(v[largest]), final_loss(v[smallest]))
    return [
        power_law_check(fit, bend, [v[w].params for w in done],
                        [final_loss(v[w]).mean for w in done], table),
        Check(f"The {largest}-wide model beats the {smallest}-wide one", bigger,
              f"{final_loss(v[largest]).text()} against {final_loss(v[smallest]).text()}, "
              f"training at {v[largest].tokens_per_s:,.0f} against "
              f"{v[smallest].tokens_per_s:,.0f} tokens/s ("
              f"{v[smallest].tokens_per_s / max(v[largest].tokens_per_s, 1e-9):.2g}x the time "
              "per token).", tests=(bigger,)),
    ]


def power_law_check(fit: PowerLaw, bend: Curvature, sizes: list[int], means: list[float],
                    table: str = "") -> Check:
    """A power law is a straight line in log-log: its local exponent is the same at every size.
    It holds when the exponent's interval lies above zero and the test of the bend (the change
    of the local exponent across the sizes) finds none; it fails when the bend is significant
    (a saturating or steepening curve) or the exponent's interval lies below zero."""
    bend_test = Test("t-test of the bend (quadratic term in log-log)", bend.change,
                     *bend.interval, bend.p, (fit.points,),
                     ("t", bend.se, bend.df), claimed=0,
                     unit="run")
    lo, hi = fit.interval
    local = ", ".join(f"{x:.2f}" for x in local_exponents(sizes, means))
    if hi < 0:
        outcome, reading = FAILS, "the exponent's interval lies below zero: bigger is worse here"
    elif bend_test.decided:
        outcome = FAILS
        reading = (f"the local exponent moves from {bend.start:.2f} to {bend.end:.2f} across "
                   "the sizes, more than the seeds allow for one exponent: not a power law here")
    elif lo > 0:
        outcome, reading = HOLDS, ("the exponent's interval lies above zero and the test finds "
                                   "no bend: one exponent fits every size")
    else:
        outcome, reading = UNDECIDED, "the exponent's interval includes zero: no trend is shown"
    return Check("Loss falls as a power of parameters", outcome,
                 f"Fit over every run: {fit.text()}; local exponents between neighbouring "
                 f"widths {local}; {reading}." + (f" {table}." if table else ""),
                 tests=(bend_test,), why="the exponent's interval includes zero")


def floor_sentence(params: list[int], losses: list[float]) -> str:
    """What a power law with a floor (L = E + A N^-alpha) says of these runs: the floor the
    losses level off toward when its interval lies above zero (what bends a pure power law's
    log-log line), else that these runs show none."""
    try:
        floored, pure = fit_with_floor(params, losses), fit_power_law(params, losses)
    except ValueError as exc:
        return f"No fit with a floor: {exc}."
    text = (f"With a floor: {floored.text()}, against the pure power law's R² "
            f"{pure.r_squared:.3f} on the same runs")
    if floored.floor_interval[0] > 0:
        return (f"{text}. The losses level off toward {floored.floor:.3f} nats at this "
                "budget, which a pure power law (no floor term) cannot do: the floor is what "
                "bends its log-log line (Hoffmann et al. 2022 fit L = E + A/N^alpha + B/D^beta; "
                "E and the data term together are this floor).")
    return (f"{text}. The floor's interval reaches zero, so these runs show no floor: any bend "
            "is not a levelling off.")


def notes(c) -> list[str]:
    done, params, losses = runs(c)
    return [floor_sentence(params, losses)] if len(done) >= 3 else []


PAPER = Paper(
    "Kaplan et al. 2020, Scaling Laws for Neural Language Models",
    "test loss fell as a smooth power law in the non-embedding parameter count when neither "
    "data nor compute held it back, over models spanning about seven orders of magnitude",
    "Transformer language models spanning about seven orders of magnitude in size and "
    "compute")


register(Lesson(
    "scale", "Lesson: loss against parameters", CLAIM,
    "project seed, GPT-1 to GPT-3 (scale)", "tiny-gpt",
    [(KEY, list(WIDTHS))], LESSON_TRAINING, judge, papers=(PAPER,), notes=notes))
