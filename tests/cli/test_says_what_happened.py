"""Small command-line truths: a lesson's last line says what was trained, reused or failed;
`explain --no-values` writes no value of any stage; `compare --lesson` reads --seeds as
`lesson` does."""
from __future__ import annotations

import json

from tfstudio.cli import main
from tfstudio.cli.lesson import what_ran


def test_a_lesson_whose_runs_were_all_reused_says_so_not_a_time():
    assert what_ran("norm", 6, 6, 0, 0.2, "3 seed(s), 600 steps") == (
        "lesson norm: trained no run, reused 6 finished run(s) from its folder (3 seed(s), "
        "600 steps)")


def test_a_lesson_that_trained_says_how_many_and_how_long():
    assert what_ran("norm", 6, 2, 0, 93.4, "3 seed(s), 600 steps") == (
        "lesson norm: trained 4 of 6 run(s) in 93s, reused 2 finished run(s) from its folder "
        "(3 seed(s), 600 steps)")
    assert what_ran("norm", 6, 0, 0, 12.0, "b") == "lesson norm: trained 6 of 6 run(s) in 12s (b)"


def test_a_lesson_whose_runs_all_failed_says_none_trained():
    assert what_ran("norm", 6, 0, 6, 0.3, "b") == (
        "lesson norm: trained no run, 6 failed (see above) (b)")
    assert what_ran("norm", 6, 1, 2, 40.0, "b") == (
        "lesson norm: trained 3 of 6 run(s) in 40s, reused 1 finished run(s) from its folder, "
        "2 failed (see above) (b)")


def test_compare_lesson_refuses_repeated_seeds_like_lesson(tmp_path, capsys):
    for command in (["lesson", "norm"], ["compare", "--lesson", "norm"]):
        assert main([*command, "--seeds", "1,1", "--out", str(tmp_path / "l")]) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith("--seeds needs distinct seeds such as 1,2,3; got '1,1'"), err
        assert not (tmp_path / "l").exists()


def test_explain_no_values_writes_no_stage_value(capsys):
    args = ["explain", "tiny-gpt", "--text", "the cat sat", "--json", "--seed", "1"]
    assert main(args) == 0
    full = json.loads(capsys.readouterr().out)
    assert any("picked" in s or "per_position" in s for s in full["stages"])  # it has values
    assert main([*args, "--no-values"]) == 0
    bare = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in bare["stages"]] == [s["name"] for s in full["stages"]]
    for stage in bare["stages"]:
        assert set(stage) == {"name", "formula", "shape", "block", "kind"}, stage


def test_compare_and_lesson_with_out_a_file_say_so_in_words(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("mine")
    for command in (["compare", "tiny-gpt", "--vary", "norm=pre,post", "--steps", "2"],
                    ["lesson", "norm", "--steps", "2"]):
        assert main([*command, "--out", str(afile)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith(f"--out {afile} is a file, not a folder; choose a folder (new or "
                            "one holding this comparison's runs)"), err
        assert afile.read_text() == "mine"
