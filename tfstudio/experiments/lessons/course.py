"""The lessons as a course: their order in the story of language models, and the graph edits
the course's lessons vary (each registered as a lesson setting, so a comparison's plan can
build its variants like any switch)."""
from __future__ import annotations

from typing import Callable

from ...graph import Graph
from ..variants import LESSON_SETTINGS, VariantError

# the story's order: counting and early neural LMs, static then contextual vectors, the
# transformer's parts, the modern block, scale, and how text is drawn from a model
ORDER = ("history", "vectors", "positions", "attention", "norm", "activations", "experts",
         "scale", "sampling")
# seconds one training step of a lesson's tiny model takes on one thread of a 2-core machine
# (tiny-gpt, 16 x 64 tokens; measured: bench/bench_course.py --step-time)
STEP_SECONDS = 0.13


def course() -> list:
    """The registered lessons in the course's order (any not in ORDER last, by name)."""
    from . import LESSONS

    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(LESSONS.values(), key=lambda lesson: (rank.get(lesson.name, len(ORDER)),
                                                        lesson.name))


def estimated_minutes(lesson) -> float:
    """Runs x steps x STEP_SECONDS: an estimate from tiny-gpt's step time, not a measurement
    of this lesson (bench/bench_course.py measures them)."""
    runs = len(lesson.seeds)
    for _, values in lesson.varies:
        runs *= len(values)
    return runs * lesson.config().steps * STEP_SECONDS / 60.0


def setting(key: str, choices: tuple[str, ...]):
    """Register ``edit(graph, value)`` as the lesson setting ``key`` taking ``choices``."""
    def wrap(edit: Callable[[Graph, str], Graph]):
        def checked(graph: Graph, value: str) -> Graph:
            if value not in choices:
                raise VariantError(f"{key}={value} is not a choice; {key} takes "
                                   f"{', '.join(choices)}")
            return edit(graph, value)
        LESSON_SETTINGS[key] = checked
        return edit
    return wrap


def blocks(graph: Graph, *types: str) -> list:
    """Every node of one of ``types``, at any depth."""
    return [node for _, node in graph.walk() if node.type in types]
