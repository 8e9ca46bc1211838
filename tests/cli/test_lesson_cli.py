"""tfstudio lesson / compare --lesson: the options mean what they say (no training: the
commands are printed and the plan read back); listing the course and its help load no torch."""
from __future__ import annotations

import json
import subprocess
import sys

from tfstudio.cli import main


def plan(out):
    return json.loads((out / "compare.json").read_text())


def test_compare_lesson_honours_seeds_and_steps(tmp_path, capsys):
    out = tmp_path / "pos"
    assert main(["compare", "--lesson", "positions", "--seeds", "7", "--steps", "10",
                 "--print-commands", "--out", str(out)]) == 0
    saved = plan(out)
    assert saved["seeds"] == [7] and saved["config"]["steps"] == 10
    assert saved["config"]["seed"] == 7 and saved["lesson"] == "positions"
    commands = capsys.readouterr().out.splitlines()
    assert len(commands) == 4 and all("--seed 7" in c and "--steps 10" in c for c in commands)


def test_compare_lesson_refuses_the_flags_its_claim_fixes(tmp_path, capsys):
    status = main(["compare", "--lesson", "positions", "--lr", "0.1", "--seq-len", "32",
                   "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert status == 2 and "cannot take --seq-len, --lr" in err
    assert not (tmp_path / "x").exists()  # refused before anything was written


def test_lesson_refuses_bad_seeds_in_one_line(tmp_path, capsys):
    assert main(["lesson", "norm", "--seeds", "1,x", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "argument --seeds: takes comma-separated whole numbers" in err[0]


def test_lesson_without_seeds_trains_the_lessons_own_seeds(monkeypatch):
    import tfstudio.cli.lesson as lesson_cli
    from tfstudio.experiments.lessons import LESSONS, prepare
    asked = {}
    monkeypatch.setattr(lesson_cli, "run_lesson",
                        lambda name, out, **kw: asked.update(kw) or 0)
    assert main(["lesson", "activations", "--steps", "2"]) == 0
    assert asked["seeds"] is None
    assert prepare("activations", seeds=asked["seeds"]).seeds == \
        list(LESSONS["activations"].seeds)
    assert len(LESSONS["activations"].seeds) == 4      # chosen for power, not the default 3
    assert main(["lesson", "activations", "--seeds", "5,6"]) == 0 and asked["seeds"] == [5, 6]


# the listing and the help in a fresh interpreter: what each printed, and whether torch loaded
LIST_AND_HELP = """
import contextlib, io, json, sys
from tfstudio.cli import main
listed, helped = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(listed):
    statuses = [main(["lesson"])]
with contextlib.redirect_stdout(helped):
    statuses.append(main(["lesson", "-h"]))
print(json.dumps([statuses, listed.getvalue(), helped.getvalue(), "torch" in sys.modules]))
"""


def test_listing_the_course_and_its_help_import_no_torch(capsys, monkeypatch):
    """`tfstudio lesson` and `tfstudio lesson -h` answer in half a second, not two: torch
    (1.5 s) is imported by what trains and measures, never by the lessons' definitions."""
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps the help alike here and there
    out = subprocess.run([sys.executable, "-c", LIST_AND_HELP], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    statuses, listed, helped, torch_loaded = json.loads(out.stdout)
    assert statuses == [0, 0] and not torch_loaded
    # the same words as the listing and help printed here, where everything may be loaded
    from tfstudio.experiments.lessons.course import course
    assert main(["lesson"]) == 0
    assert listed == capsys.readouterr().out
    assert main(["lesson", "-h"]) == 0
    assert helped == capsys.readouterr().out and "usage: tfstudio lesson" in helped
    rows = [line.split(" ")[1] for line in listed.splitlines() if line[:1].isdigit()]
    assert rows == [lesson.name for lesson in course()] and len(rows) == 11
