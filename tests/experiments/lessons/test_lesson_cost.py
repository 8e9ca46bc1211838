"""A lesson's time estimate: its step count (every variant, seed and extra training) times the
measured CPU seconds per step, shared over two cores where the runs are separate processes."""
from __future__ import annotations

import pytest

from tfstudio.experiments.lessons import LESSONS
from tfstudio.experiments.lessons.cost import estimate, trainings
from tfstudio.experiments.lessons.interpolation import TUNE_STEPS
from tfstudio.experiments.lessons.norm import SWEEP_LRS, SWEEP_STEPS


def flat(name, seconds):
    return {name: {t.key: seconds for t in trainings(LESSONS[name])}}


def test_variants_times_seeds_times_steps_shared_over_two_cores():
    lesson = LESSONS["activations"]                      # 4 variants x 3 seeds, no extras
    steps = lesson.config().steps
    found = estimate(lesson, 3, costs=flat("activations", 0.05), overhead=0, in_process=0,
                   after={})
    assert found.steps == 12 * steps
    assert found.cpu_s == pytest.approx(12 * steps * 0.05)
    assert found.wall_s == pytest.approx(6 * steps * 0.05)   # 6 runs on each core


def test_a_dearer_variant_counts_at_its_own_cost_and_an_odd_run_count_leaves_a_core_idle():
    lesson = LESSONS["attention"]                        # 3 variants x 3 seeds = 9 runs
    steps = lesson.config().steps
    costs = flat("attention", 0.01)
    costs["attention"]["attention=mqa"] = 0.04
    # 3 runs: mha and gqa on the two cores, then mqa
    found = estimate(lesson, costs=costs, seeds=1, overhead=0, in_process=0,
                   after={})
    assert found.cpu_s == pytest.approx(steps * (0.01 + 0.01 + 0.04))
    assert found.wall_s == pytest.approx(steps * (0.01 + 0.04))   # mqa follows mha's core


def test_the_norm_lessons_lr_sweep_runs_one_training_at_a_time():
    lesson = LESSONS["norm"]
    steps = lesson.config().steps
    found = estimate(lesson, costs=flat("norm", 0.1), overhead=0, in_process=0,
                   after={})
    sweep = 3 * len(SWEEP_LRS) * min(SWEEP_STEPS, steps) * 0.1
    assert found.cpu_s == pytest.approx(9 * steps * 0.1 + sweep)
    assert found.wall_s == pytest.approx(5 * steps * 0.1 + sweep)   # 5 of 9 runs on one core


def test_interpolation_counts_its_own_schedule_serially():
    lesson = LESSONS["interpolation"]
    costs = {"interpolation": {"short": 0.1, "tune": 0.2}}
    found = estimate(lesson, seeds=2, overhead=0, in_process=0, after={}, costs=costs)
    steps = lesson.config().steps
    assert found.cpu_s == pytest.approx(2 * steps * 0.1 + 2 * 3 * TUNE_STEPS * 0.2)
    assert found.wall_s == pytest.approx(found.cpu_s)
    # --steps 50 shortens the fine-tunes too: a quarter of the training, as at 400 and 100
    short = estimate(lesson, seeds=2, steps=50, overhead=0, in_process=0, after={}, costs=costs)
    assert short.cpu_s == pytest.approx(2 * 50 * 0.1 + 2 * 3 * 12 * 0.2)


def test_every_run_pays_the_start_up_overhead_once():
    lesson = LESSONS["activations"]
    bare = estimate(lesson, 3, costs=flat("activations", 0.05), overhead=0, in_process=0,
                    after={})
    paid = estimate(lesson, 3, costs=flat("activations", 0.05), overhead=4.0, in_process=0,
                    after={})
    assert paid.cpu_s - bare.cpu_s == pytest.approx(12 * 4.0)
    assert paid.wall_s - bare.wall_s == pytest.approx(6 * 4.0)


def test_a_training_inside_the_lessons_process_pays_the_smaller_overhead():
    lesson = LESSONS["norm"]
    costs = flat("norm", 0.1)
    bare = estimate(lesson, costs=costs, overhead=0, in_process=0,
                   after={})
    paid = estimate(lesson, costs=costs, overhead=0, in_process=1.0, after={})
    assert paid.wall_s - bare.wall_s == pytest.approx(3 * len(SWEEP_LRS) * 1.0)


def test_an_unmeasured_training_is_named_not_counted():
    found = estimate(LESSONS["sampling"], costs={})
    assert found.steps == 0 and found.missing == ("base",)
    assert "no measured step cost" in found.text()


def test_every_lesson_has_a_measured_step_cost_for_everything_it_trains():
    for lesson in LESSONS.values():
        found = estimate(lesson)
        assert found.missing == (), (lesson.name, found.missing)


def test_every_lesson_fits_five_minutes_on_two_cores_and_the_course_45():
    walls = {name: estimate(lesson).wall_s for name, lesson in LESSONS.items()}
    assert max(walls.values()) <= 300, walls
    assert sum(walls.values()) <= 45 * 60


def test_what_a_lesson_does_after_training_counts_once_per_run_in_its_own_process():
    lesson = LESSONS["sampling"]                         # one model, 3 seeds
    steps = lesson.config().steps
    bare = estimate(lesson, 3, costs=flat("sampling", 0.05), overhead=0, in_process=0,
                    after={})
    found = estimate(lesson, 3, costs=flat("sampling", 0.05), overhead=0, in_process=0,
                     after={"sampling": 20.0})
    assert bare.cpu_s == pytest.approx(3 * steps * 0.05)
    assert found.cpu_s == pytest.approx(bare.cpu_s + 3 * 20.0)
    assert found.wall_s == pytest.approx(bare.wall_s + 3 * 20.0)   # one run after another


def test_a_lesson_that_trains_itself_counts_its_measuring_once_per_training():
    # interpolation measures each model's loss by position out to 512 tokens once trained
    lesson = LESSONS["interpolation"]
    costs = {"interpolation": {"short": 0.1, "tune": 0.2}}
    bare = estimate(lesson, seeds=2, overhead=0, in_process=0, after={}, costs=costs)
    found = estimate(lesson, seeds=2, overhead=0, in_process=0,
                     after={"interpolation": 1.5}, costs=costs)
    trained = 2 + 2 * 3                                # a short model and 3 fine-tunes a seed
    assert found.cpu_s == pytest.approx(bare.cpu_s + trained * 1.5)
    assert found.wall_s == pytest.approx(found.cpu_s)   # all in one process
