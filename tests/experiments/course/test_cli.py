"""`tfstudio lesson` with no name lists the course in order; `lesson all` runs every lesson into
its own folder and writes course.html linking each page."""
from __future__ import annotations

import os

import pytest

from tfstudio.cli import main
from tfstudio.experiments.lessons import LESSONS
from tfstudio.experiments.lessons.course import ORDER, estimated_minutes, minutes_text, run_course
from tfstudio.runs import RunFolder


def test_lesson_without_a_name_prints_the_course_in_order(capsys):
    assert main(["lesson"]) == 0
    out = capsys.readouterr().out.splitlines()
    numbered = [line for line in out if line[:1].isdigit()]
    assert [line.split(". ", 1)[1].split(" ", 1)[0] for line in numbered] == list(ORDER)
    history = LESSONS["history"]
    assert numbered[0] == f"1. history ({minutes_text(history)}, {history.source})"
    assert minutes_text(history).startswith(f"~{estimated_minutes(history):.1f} min on 2 cores")
    assert out[-1].startswith("The course: ~")
    assert out[1].strip() == history.claim


def test_course_runs_each_lesson_into_its_folder_and_links_the_pages(tmp_path):
    ran = []

    def run_one(name, folder):
        ran.append(name)
        if name == "scale":
            return 1, []                 # failed: no page, no verdict
        folder.mkdir(parents=True)
        (folder / "report.html").write_text("<html></html>")
        return 0, ["Claim (...): ...", f"Verdict: holds here ({name})", "A check: holds."]

    status, page, entries = run_course(tmp_path, run_one)
    assert ran == list(ORDER) and status == 1
    assert [e.name for e in entries] == ran and entries[ORDER.index('scale')].status == 1
    text = page.read_text()
    assert page == tmp_path / "course.html"
    assert '<a href="history/report.html">' in text and '<a href="scale/report.html">' not in text
    assert "no page: the lesson failed" in text
    assert text.index("history/report.html") < text.index("sampling/report.html")
    assert "Verdict: holds here (history)" in text
    assert "no verdict: the lesson ended with exit status 1" in text   # said, not invented
    assert all(e.cpu_seconds >= 0 for e in entries) and " s CPU" in text


def test_a_lessons_time_is_said_against_its_estimate_and_the_load():
    from tfstudio.experiments.lessons.course import CourseEntry
    near = CourseEntry("sampling", None, 0, 300.0, "", 598.0, 560.0, load=0.5)
    assert near.time_text().startswith("300 s (598 s CPU; estimated 560 s CPU: 1.07x, within "
                                       "25%; load 0.5 on")
    assert "busy" not in near.time_text()
    far = CourseEntry("sampling", None, 0, 300.0, "", 760.0, 560.0, load=(os.cpu_count() or 1) + 1)
    assert "1.36x, outside 25%" in far.time_text() and "busy, more work than cores" in \
        far.time_text()
    assert "estimated" not in CourseEntry("x", None, 0, 1.0, "", 1.0).time_text()
    again = CourseEntry("sampling", None, 0, 1.0, "", 0.5, 560.0, reused=True).time_text()
    assert "no estimate is compared" in again and "0.00x" not in again


def test_the_course_page_gives_each_lessons_estimate(tmp_path):
    def run_one(name, folder):
        return 0, [f"Verdict: holds here ({name})"]

    _, page, entries = run_course(tmp_path, run_one, estimate=lambda lesson: 1e6)
    assert all(e.estimate_cpu_s == 1e6 and e.load is not None for e in entries)
    assert page.read_text().count("estimated 1000000 s CPU") == len(ORDER)
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "compare.json").write_text("{}")   # a run of the course before
    _, page, entries = run_course(tmp_path, run_one, estimate=lambda lesson: 1e6)
    assert [e.reused for e in entries] == [e.name == "history" for e in entries]
    assert page.read_text().count("estimated 1000000 s CPU") == len(ORDER) - 1


def test_lesson_all_refuses_bad_seeds_in_one_line(capsys):
    assert main(["lesson", "all", "--seeds", "1,x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--seeds" in err[0]


@pytest.mark.slow
def test_the_whole_course_runs_end_to_end_on_a_tiny_budget(tmp_path, capsys, monkeypatch):
    """Every lesson's own code (its training, its measurements after training, its page) on
    2 steps and one seed: a lesson that cannot run is found here, not by a student. (The norm
    lesson's lr sweep once read a helper that had been deleted as dead code.) The
    measurements whose size --steps does not set run small too (the same code; at full size
    they were a third of this test): the sampling grid on one text of 12 tokens per prompt
    and its repetition texts of 24, decode timed at contexts 16 and 64, the loss by position
    over 8 windows of the validation split, not 64 (a tenth of this test), and each run's
    generation speed and cache bytes at 16 tokens, not at the length it trained at."""
    import functools

    from tfstudio.experiments import inference, lengths
    from tfstudio.experiments.lessons import attention, sampling

    monkeypatch.setattr(lengths, "evaluate_run",
                        functools.partial(lengths.evaluate_run, max_windows=8))
    monkeypatch.setattr(inference, "measure_run",
                        functools.partial(inference.measure_run, context_length=16))
    monkeypatch.setattr(sampling, "SAMPLES", 1)
    monkeypatch.setattr(sampling, "NEW_TOKENS", 12)
    monkeypatch.setattr(sampling, "REPEAT_CHARS", 24)
    monkeypatch.setattr(attention, "CONTEXTS", (16, 64))
    monkeypatch.setattr(attention, "NO_CACHE_CONTEXTS", (16,))
    out = tmp_path / "course"
    assert main(["lesson", "all", "--steps", "2", "--seeds", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    page = (out / "course.html").read_text()
    for name in ORDER:
        assert f"Claim ({LESSONS[name].source})" in printed, name
        assert (out / name / "report.html").exists(), name
        assert f'<a href="{name}/report.html">' in page, name
    assert printed.count("Verdict: ") == len(ORDER)
    assert len(list((out / "vectors").rglob("vectors.json"))) == 1   # measured, one seed
    assert len(list((out / "norm").rglob("lr_sweep.json"))) == 1
    assert len(list((out / "sampling").rglob("sampling.json"))) == 1
    assert len(list((out / "sampling").rglob("repetition.json"))) == 1
    assert (out / "attention" / "decode.json").exists()
    # interpolation's fine-tunes keep to a quarter of the training: 1 step here, not 100
    tuned = RunFolder(out / "interpolation" / "runs" / "tune-linear" / "seed-1")
    assert tuned.config().steps == 1 and "then a 1-step fine-tune at 256" in printed
    tuning = (out / "interpolation" / "report.md").read_text()
    assert "(2 steps of 16 x 64), then fine-tuned 1 step of 4 x 256;" in tuning
