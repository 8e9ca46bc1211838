"""The built-in lessons: one module per lesson in this package, each calling ``register`` with
a ``Lesson`` (its claim, variants, training and ``judge``). A new lesson is a new module here;
nothing else needs editing, since importing the package imports every module in it.

``prepare(name, seeds=, steps=)`` is the one way to run a lesson: the command line
(``tfstudio lesson``, ``tfstudio compare --lesson``) and the app's Compare view both train what
it returns, and the page's sentences come from ``Lesson.summarise`` on the finished runs.

A lesson module, in short (see ``attention.py``)::

    def judge(c):                        # c: results.Comparison of the finished runs
        v = measures.variants(c, "attention")
        a, b = measures.final_loss(v["mha"]), measures.final_loss(v["mqa"])
        cost = higher(b, a)                 # Welch's t over the seeds: p, interval, power
        return [Check("MQA costs quality", cost.outcome,
                      f"MHA {a.text()}, MQA {b.text()}.",  # numbers, never a fixed verdict
                      tests=(cost,))]                      # quoted after the sentence

    register(Lesson("name", "Lesson: ...", CLAIM, "project seed, section ...", "tiny-gpt",
                    [("attention", ["mha", "mqa"])], LESSON_TRAINING, judge))

A lesson that is not one comparison of variants gives ``run=`` (it trains and measures itself,
see ``interpolation.py``) and names its trainings in ``sweeps=``, so each trains at the lr its
recorded sweep chose; ``measure=`` takes extra measurements once the runs are in, and
``notes=`` adds measured sentences that do not enter the verdict.
"""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from dataclasses import dataclass

from ...graph import Graph
from ...runs import TrainConfig
from .lesson import (DEFAULT_SEEDS, FACT, FAILS, HOLDS, UNDECIDED, Check, Lesson, Paper, Sample,
                     Test, Verdict, both, fact, higher, lower)

__all__ = ["LESSONS", "Lesson", "Check", "Verdict", "Sample", "LessonRun", "prepare",
           "register", "lower", "higher", "both", "fact", "Paper", "Test", "HOLDS", "FAILS",
           "UNDECIDED", "FACT", "DEFAULT_SEEDS"]

# modules of this package that are not lessons
_FRAMEWORK = {"lesson", "significance", "measures", "training", "cost", "step_costs",
              "lr_record", "budget"}


LESSONS: dict[str, Lesson] = {}



def register(lesson: Lesson) -> Lesson:
    """Add ``lesson`` to ``LESSONS`` (a module of this package calls it at import)."""
    if lesson.name in LESSONS:
        raise ValueError(f"two lessons are named '{lesson.name}'")
    LESSONS[lesson.name] = lesson
    return lesson


@dataclass
class LessonRun:
    """Everything a comparison needs to run lesson ``lesson``."""
    lesson: str
    label: str                       # the base and its edits, for the page ("tiny-gpt (...)")
    base: Graph
    varies: list[tuple[str, list[str]]]
    seeds: list[int]
    config: TrainConfig              # the first seed's; each run takes its own seed
    eval_lengths: list[int]
    lrs: dict[str, float] = dataclasses.field(default_factory=dict)  # variant -> its own lr
    lrs_budget: float = 0            # the budget the lrs were swept at (0: none recorded)


def prepare(name: str, *, seeds: list[int] | None = None, steps: int | None = None,
            budget: float = 1) -> LessonRun:
    """Lesson ``name`` ready to train: its base graph with its edits, its variants, its seeds
    (3 by default) and its training settings (``steps`` overrides its length; ``budget``
    multiplies it, 4 for ``--budget 4x``). Raises ValueError naming the lessons there are
    when ``name`` is not one."""
    from ... import load_graph
    from ..variants import apply_setting

    lesson = LESSONS.get(name)
    if lesson is None:
        raise ValueError(f"no lesson '{name}'; choose one of {', '.join(sorted(LESSONS))}")
    seeds = list(seeds) if seeds else list(lesson.seeds)
    if lesson.run is not None:
        raise ValueError(f"lesson '{name}' is not a comparison of variants; run it with "
                         f"tfstudio lesson {name}")
    if steps is not None and steps < 1:
        raise ValueError(f"--steps must be at least 1; got {steps}")
    if budget <= 0:
        raise ValueError(f"--budget must be above 0 (such as 4x); got {budget:g}")
    if budget != 1:
        steps = max(1, round((steps or lesson.training["steps"]) * budget))
    base = load_graph(lesson.base)
    for key, value in lesson.base_edits:
        base = apply_setting(base, key, value)
    label = lesson.base + "".join(f" ({k}={v})" for k, v in lesson.base_edits)
    from .lr_record import chosen_lrs
    lrs, swept_at = chosen_lrs(name, budget)
    return LessonRun(name, label, base, list(lesson.varies), seeds,
                     lesson.config(seeds[0], steps), list(lesson.eval_lengths), lrs, swept_at)


# every lesson module registers itself on import (after ``register`` exists)
for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _FRAMEWORK and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
