"""What a lesson is: a claim from the project's seed, the comparison that would support it, and
a verdict computed from the runs.

A lesson names its variants and training; ``judge`` turns the finished comparison into checks,
one per part of the claim, each with the sentence that reports it (built from the numbers, never
written in advance). A difference between two variants counts only when it is larger than the
two seeds' spreads added (sample standard deviations); with one seed nothing counts, since
there is no spread to tell a difference from noise.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ...runs import TrainConfig

HOLDS, FAILS, UNDECIDED = "holds", "fails", "undecided"
VERDICTS = {HOLDS: "holds here", FAILS: "does not hold here", "mixed": "mixed"}
DEFAULT_SEEDS = (1, 2, 3)
RULE = ("a difference counts when it is larger than the two spreads added (sample standard "
        "deviation over seeds)")


@dataclass(frozen=True)
class Sample:
    """One measurement of one variant over its seeds."""
    values: tuple[float, ...]

    @classmethod
    def of(cls, values: Sequence[float]) -> "Sample":
        return cls(tuple(float(v) for v in values))

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def spread(self) -> float | None:
        return statistics.stdev(self.values) if len(self.values) > 1 else None

    def text(self, digits: int = 3) -> str:
        """"1.292 ± 0.047" (mean ± spread over seeds), or "1.292 (1 seed)"."""
        if self.spread is None:
            return f"{self.mean:.{digits}f} (1 seed)"
        return f"{self.mean:.{digits}f} ± {self.spread:.{digits}f}"


def lower(a: Sample, b: Sample | float) -> str:
    """Whether ``a`` is below ``b`` by more than their spreads: HOLDS (it is), FAILS (``a`` is
    above ``b`` by more than the spreads) or UNDECIDED (within the spreads, or one seed).
    ``b`` may be a fixed number (a counting baseline), which has no spread."""
    b_mean, b_spread = (b.mean, b.spread) if isinstance(b, Sample) else (float(b), 0.0)
    if a.spread is None or (isinstance(b, Sample) and b_spread is None):
        return UNDECIDED
    gap = b_mean - a.mean
    if abs(gap) <= a.spread + b_spread:
        return UNDECIDED
    return HOLDS if gap > 0 else FAILS


def higher(a: Sample, b: Sample | float) -> str:
    """``lower`` the other way round: whether ``a`` is above ``b`` by more than the spreads."""
    flip = {HOLDS: FAILS, FAILS: HOLDS, UNDECIDED: UNDECIDED}
    return flip[lower(a, b)]


def both(*outcomes: str) -> str:
    """HOLDS when every part holds, FAILS when any part fails, else UNDECIDED."""
    if FAILS in outcomes:
        return FAILS
    return HOLDS if all(o == HOLDS for o in outcomes) else UNDECIDED


@dataclass(frozen=True)
class Check:
    """One part of a lesson's claim, tested: what would support it, how it came out, and the
    sentence that reports the numbers that decided it."""
    claim: str
    outcome: str          # HOLDS, FAILS or UNDECIDED
    sentence: str

    @property
    def label(self) -> str:
        return {HOLDS: "holds", FAILS: "does not hold",
                UNDECIDED: "not decided (within the spread)"}[self.outcome]


@dataclass(frozen=True)
class Verdict:
    word: str             # "holds here", "does not hold here" or "mixed"
    checks: tuple[Check, ...]

    @classmethod
    def of(cls, checks: Sequence[Check]) -> "Verdict":
        outcomes = {c.outcome for c in checks}
        key = (HOLDS if outcomes == {HOLDS} else FAILS if outcomes == {FAILS} else "mixed")
        return cls(VERDICTS[key], tuple(checks))

    def sentences(self) -> list[str]:
        """The verdict line, then each check: its claim, its outcome, its numbers."""
        counts = {label: sum(c.outcome == o for c in self.checks)
                  for o, label in ((HOLDS, "hold"), (FAILS, "do not"), (UNDECIDED, "undecided"))}
        tally = ", ".join(f"{n} {label}" for label, n in counts.items() if n)
        lines = [f"Verdict: {self.word} ({tally} of {len(self.checks)} checks; "
                 f"{RULE})."]
        lines += [f"{c.claim}: {c.label}. {c.sentence}" for c in self.checks]
        return lines


@dataclass
class Lesson:
    """A registered lesson. ``judge(comparison)`` returns its checks; everything the page says
    beyond the claim comes from them."""
    name: str
    title: str
    claim: str                                   # the seed's claim, in its words
    source: str                                  # where in the seed it stands
    base: str                                    # a preset
    varies: list[tuple[str, list[str]]]
    training: dict                               # TrainConfig fields
    judge: Callable[..., list[Check]]
    base_edits: list[tuple[str, str]] = field(default_factory=list)  # applied to the base first
    eval_lengths: list[int] = field(default_factory=list)
    grad_norms: bool = False                     # draw per-layer gradient norms
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    # a lesson that is not one comparison of variants trains and measures itself:
    # run(out, seeds, steps, say) -> its results, which judge() reads (command line only)
    run: Callable | None = None
    # measurements taken once the runs are in, before the page: measure(comparison), which
    # saves them in the comparison folder for judge() to read
    measure: Callable | None = None
    # sentences on measurements that are shown but do not enter the verdict: notes(comparison)
    notes: Callable | None = None
    # tables of its own measurements on its page: tables(comparison) -> [(title, header, rows)]
    tables: Callable | None = None
    # what it trains besides one run per variant and seed (or all of it, for a lesson with
    # ``run``): schedule(seeds, steps) -> [cost.Training], for the time estimate
    schedule: Callable | None = None

    def config(self, seed: int | None = None, steps: int | None = None) -> TrainConfig:
        """The lesson's training settings (``steps`` shortens or lengthens it; evaluation
        keeps its spacing but never waits past the last step, and never reads more batches
        than the run trains on: a 2-step try-out evaluated 8, four times its training)."""
        settings = {**self.training, "seed": self.seeds[0] if seed is None else seed}
        if steps is not None:
            settings["steps"] = steps
            settings["eval_every"] = max(1, min(settings.get("eval_every", steps), steps))
            settings["eval_batches"] = min(settings.get("eval_batches",
                                                        TrainConfig.eval_batches), steps)
        return TrainConfig(**settings)

    def verdict(self, comparison) -> Verdict:
        return Verdict.of(self.judge(comparison))

    def summarise(self, comparison) -> list[str]:
        """The page's sentences: the claim with its source, the verdict, each check."""
        seeds = len(comparison.seeds if hasattr(comparison, "seeds") else
                    comparison.plan.seeds)
        head = f"Claim ({self.source}): {self.claim}"
        lines = [head, *self.verdict(comparison).sentences()]
        if self.notes is not None:
            lines += [f"Also measured (not part of the verdict): {n}" for n in
                      self.notes(comparison)]
        if seeds < 2:
            lines.append("One seed gives no spread, so no difference counts; run 3 seeds "
                         "(the default) to decide.")
        return lines
