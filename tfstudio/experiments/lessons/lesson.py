"""What a lesson is: a claim from the project's seed, the comparison that would support it, and
a verdict computed from the runs.

A lesson names its variants and training; ``judge`` turns the finished comparison into checks,
one per part of the claim, each with the sentence that reports it (built from the numbers, never
written in advance). A difference decides a check when a two-sided t-test gives p < 0.05
(``significance``: Welch's t between variants, the one-sample t against a counted baseline,
Holm's correction over a claim's buckets), and each check quotes the difference, its 95%
interval, the p-value and the seeds. A statement true by construction (equal parameter counts
by design, a cache size from tensor shapes) is a ``fact``: shown, never counted.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ...runs import TrainConfig
from .significance import ALPHA, FAILS, HOLDS, POWER, UNDECIDED, Test, holm, t_test

FACT = "fact"
VERDICTS = {HOLDS: "holds here", FAILS: "does not hold here", UNDECIDED: "not decided here",
            "mixed": "mixed"}
DEFAULT_SEEDS = (1, 2, 3)
RULE = (f"a difference counts when a two-sided t-test gives p < {ALPHA:g} (Welch's between "
        "variants, one-sample against a counted baseline, paired where one model per seed is "
        "measured several ways; Holm's correction over a claim's buckets), so a true difference "
        "of zero decides a check 5% of the time")

__all__ = ["HOLDS", "FAILS", "UNDECIDED", "FACT", "ALPHA", "POWER", "Test", "holm", "Sample",
           "lower", "higher", "both", "outcome_of", "Check", "fact", "Verdict", "Paper",
           "Lesson", "DEFAULT_SEEDS", "RULE"]


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


def lower(a: Sample, b: Sample | float, *, paired: bool = False, digits: int = 3) -> Test:
    """The test of "``a`` lies below ``b``": its ``outcome`` is HOLDS (p < ALPHA, a below),
    FAILS (p < ALPHA, a above) or UNDECIDED. ``b`` may be a fixed number (a counted baseline),
    tested with the one-sample t; ``paired`` pairs two samples seed by seed (one model per
    seed measured two ways)."""
    other = b.values if isinstance(b, Sample) else float(b)
    return t_test(a.values, other, claimed=-1, paired=paired, digits=digits)


def higher(a: Sample, b: Sample | float, *, paired: bool = False, digits: int = 3) -> Test:
    """``lower`` the other way round: the test of "``a`` lies above ``b``"."""
    return lower(a, b, paired=paired, digits=digits).flipped()


def outcome_of(result: Test | str) -> str:
    return result.outcome if isinstance(result, Test) else result


def both(*results: Test | str) -> str:
    """HOLDS when every part holds, FAILS when any part fails, else UNDECIDED."""
    outcomes = [outcome_of(r) for r in results]
    if FAILS in outcomes:
        return FAILS
    return HOLDS if all(o == HOLDS for o in outcomes) else UNDECIDED


@dataclass(frozen=True)
class Check:
    """One part of a lesson's claim, tested: what would support it, how it came out, the
    sentence that reports the numbers, and the tests that decided it (each quoted after the
    sentence). ``why`` names what left an undecided check undecided when it is not a test's
    p-value (a threshold, a missing measurement)."""
    claim: str
    outcome: str          # HOLDS, FAILS, UNDECIDED or FACT
    sentence: str
    tests: tuple[Test, ...] = ()
    why: str = ""

    def __post_init__(self):
        object.__setattr__(self, "outcome", outcome_of(self.outcome))
        object.__setattr__(self, "tests", tuple(self.tests))

    @property
    def label(self) -> str:
        if self.outcome == UNDECIDED:
            return f"not decided ({self.why or self._undecided_test()})"
        return {HOLDS: "holds", FAILS: "does not hold",
                FACT: "a fact (true by construction; not counted)"}[self.outcome]

    def _undecided_test(self) -> str:
        open_ = [t for t in self.tests if t.outcome == UNDECIDED]
        if not open_:
            return "no test decided it"
        return max(open_, key=lambda t: t.p).why_undecided()

    def text(self) -> str:
        """The check's line: claim, label, numbers, then each test's difference, interval,
        p-value and seeds."""
        tested = "".join(f" Test{f' ({t.label})' if t.label else ''}: {t.text()}."
                         for t in self.tests)
        return f"{self.claim}: {self.label}. {self.sentence}{tested}"


def fact(claim: str, true: bool, sentence: str) -> Check:
    """A statement true by construction: a FACT when it is (shown, never counted in the
    verdict); when it is not, the comparison is not what it was built to be, and that fails."""
    return Check(claim, FACT if true else FAILS, sentence)


@dataclass(frozen=True)
class Paper:
    """The published result behind a lesson's claim: who, what they measured, at what scale
    (numbers looked up in the paper, never invented)."""
    cite: str            # "Shazeer 2020, GLU Variants Improve Transformer"
    measured: str        # what it measured and found
    scale: str           # model size and training budget
    checks: tuple[str, ...] = ()   # the claims of the checks it speaks to (empty: every one)

    def sentence(self, verdict: "Verdict", here: str) -> str:
        """Whether this run agrees with the paper, from the verdict's checks; a difference is
        set beside what was measured here against the paper's scale."""
        counted = [c for c in verdict.checks if not self.checks or c.claim in self.checks]
        held = [c.claim for c in counted if c.outcome == HOLDS]
        failed = [c.claim for c in counted if c.outcome == FAILS]
        if counted and len(held) == len(counted):
            reading = "agrees with the paper"
        elif counted and len(failed) == len(counted):
            reading = "differs from the paper"
        elif failed:
            reading = (f"differs from the paper in part (does not hold: {'; '.join(failed)})")
        else:
            reading = "neither agrees nor differs: the seeds did not decide " + \
                ("every check" if not held else "some checks")
        scale = f" Measured here: {here}; the paper: {self.scale}." if here else \
            f" The paper's scale: {self.scale}."
        return f"Published: {self.cite}: {self.measured}. This run {reading}.{scale}"


@dataclass(frozen=True)
class Verdict:
    word: str             # "holds here", "does not hold here", "not decided here" or "mixed"
    checks: tuple[Check, ...]          # the counted checks
    facts: tuple[Check, ...] = ()      # true by construction, shown apart

    @classmethod
    def of(cls, checks: Sequence[Check]) -> "Verdict":
        counted = tuple(c for c in checks if c.outcome != FACT)
        facts = tuple(c for c in checks if c.outcome == FACT)
        outcomes = {c.outcome for c in counted}
        # one outcome for every check names it (every check undecided is no verdict, not a mix)
        key = outcomes.pop() if len(outcomes) == 1 else "mixed"
        return cls(VERDICTS[key], counted, facts)

    def sentences(self) -> list[str]:
        """The verdict line, then each check: its claim, its outcome, its numbers and tests;
        then the facts, apart."""
        counts = {label: sum(c.outcome == o for c in self.checks)
                  for o, label in ((HOLDS, "hold"), (FAILS, "do not"), (UNDECIDED, "undecided"))}
        tally = ", ".join(f"{n} {label}" for label, n in counts.items() if n)
        lines = [f"Verdict: {self.word} ({tally} of {len(self.checks)} checks; {RULE})."]
        lines += [c.text() for c in self.checks]
        if self.facts:
            lines.append("Facts (true by construction, not counted in the verdict): " +
                         " ".join(f"{c.claim}: {c.sentence}" for c in self.facts))
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
    papers: tuple[Paper, ...] = ()               # the published results beside this one
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
    # a lesson with ``run``: its trainings, each at its own lr from the recorded sweep
    # (bench/sweep_lr.py): sweeps(steps) -> [lr_record.Swept]
    sweeps: Callable | None = None

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
        verdict = self.verdict(comparison)
        lines = [head, *verdict.sentences()]
        lines += [paper.sentence(verdict, scale_here(comparison)) for paper in self.papers]
        lines += training_lines(comparison)
        if self.notes is not None:
            lines += [f"Also measured (not part of the verdict): {n}" for n in
                      self.notes(comparison)]
        if seeds < 2:
            lines.append(f"One seed gives no spread, so no difference counts; run "
                         f"{len(self.seeds)} seeds (the default) to decide.")
        return lines


def training_lines(comparison) -> list[str]:
    """How the runs were trained, where the comparison knows: each variant's lr, the token
    variants whose sweep found the next lr up unsteady, the token budget against the counted
    baselines', the variants still learning at the end, the step at which their order settled
    and any run far from its variant's other seeds."""
    if not callable(getattr(comparison, "lr_text", None)):
        return []
    from .measures import far_seeds_sentence, order_sentence, still_learning_sentence

    lines = [f"Trained with {comparison.lr_text()}."]
    if not callable(getattr(comparison, "token_budget", None)):
        return lines    # a lesson's own result (``run``): its lrs only
    from .lr_record import unsteady_sentence
    unsteady = unsteady_sentence(comparison.plan.lesson, comparison.lrs()) \
        if comparison.plan.lesson else ""
    lines += [s for s in (unsteady, comparison.token_budget(),
                          still_learning_sentence(comparison), order_sentence(comparison),
                          far_seeds_sentence(comparison)) if s]
    return lines


def scale_here(comparison) -> str:
    """"models of 70,000 to 110,000 parameters, 409,600 training tokens each": the size and
    budget of this comparison, from its plan and variants ("" where neither is known); a
    lesson's own result says it with its ``scale()``."""
    if callable(getattr(comparison, "scale", None)):
        return comparison.scale()
    parts = []
    params = [v.params for v in getattr(comparison, "variants", []) if v.params]
    if params:
        lo, hi = min(params), max(params)
        parts.append(f"models of {lo:,} parameters" if lo == hi else
                     f"models of {lo:,} to {hi:,} parameters")
    plan = getattr(comparison, "plan", None)
    config = getattr(plan, "config", None)
    if config is not None:
        parts.append(f"{config.steps * config.batch_size * config.seq_len:,} training tokens "
                     f"each (on the {config.corpus} corpus)")
    return ", ".join(parts)
