"""eval, explain, generate and export say which checkpoint and device they used when it is not
the one asked for; generate says when the text will pass the trained length (the window slides);
a Hugging Face export refusal is one line."""
from __future__ import annotations

import shutil

import pytest

from tfstudio.cli import main
from tfstudio.train.device import pick_device

pytestmark = pytest.mark.usefixtures("private_caches")

TRAINED_LENGTH = 16


@pytest.fixture(scope="module")
def two_checkpoints(tmp_path_factory):
    """A 2-step tiny-gpt run with a checkpoint at each step."""
    run = tmp_path_factory.mktemp("used") / "run"
    assert main(["train", "tiny-gpt", "--out", str(run), "--corpus", "sample:small", "--steps",
                 "2", "--batch-size", "2", "--seq-len", str(TRAINED_LENGTH), "--eval-every",
                 "0", "--checkpoint-every", "1"]) == 0
    return run


@pytest.fixture
def newest_damaged(two_checkpoints, tmp_path):
    """A copy of the run whose newest checkpoint (step 2) has lost its weights' tail."""
    run = tmp_path / "run"
    shutil.copytree(two_checkpoints, run)
    weights = run / "checkpoints" / "step-00000002" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    return run


def notes(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if ": note: " in line]


@pytest.mark.parametrize("argv", [
    ["eval", "{run}", "--lengths", "8,16"],
    ["explain", "{run}", "--text", "ab"],
    ["generate", "{run}", "--max-new-tokens", "2"],
])
def test_a_reader_says_it_used_an_older_checkpoint(newest_damaged, two_checkpoints, capsys,
                                                   argv):
    command = argv[0]
    for run, older in ((newest_damaged, True), (two_checkpoints, False)):
        capsys.readouterr()
        assert main([a.format(run=run) for a in argv]) == 0
        said = [line for line in notes(capsys) if "checkpoint" in line]
        if older:
            assert len(said) == 1 and said[0].startswith(f"tfstudio {command}: note: skipped "
                                                         "a damaged checkpoint: ")
            assert "step-00000002" in said[0] and "using step-00000001 instead" in said[0]
        else:
            assert said == []


@pytest.mark.parametrize("command", ["eval", "generate"])
def test_a_device_other_than_the_one_named_is_said(two_checkpoints, capsys, command):
    extra = ["--lengths", "8,16"] if command == "eval" else ["--max-new-tokens", "2"]
    used = pick_device("auto")
    for asked, says in (("auto", True), ("cpu", False)):
        capsys.readouterr()
        assert main([command, str(two_checkpoints), *extra, "--device", asked]) == 0
        said = [line for line in notes(capsys) if "--device" in line]
        assert said == ([f"tfstudio {command}: note: --device auto: using {used}"] if says
                        else [])


def test_generation_past_the_trained_length_says_the_window_slides(two_checkpoints, capsys):
    prompt = "Once upon"  # byte tokens: 9
    for new_tokens in (TRAINED_LENGTH - len(prompt) + 1, TRAINED_LENGTH - len(prompt)):
        capsys.readouterr()
        assert main(["generate", str(two_checkpoints), "--prompt", prompt, "--max-new-tokens",
                     str(new_tokens), "--temperature", "0"]) == 0
        said = [line for line in notes(capsys) if "sliding" in line]
        passes = len(prompt) + new_tokens > TRAINED_LENGTH
        assert said == ([f"tfstudio generate: note: this run was trained on {TRAINED_LENGTH}-"
                         f"token windows; once the text passes {TRAINED_LENGTH} tokens the model "
                         f"reads only its last {TRAINED_LENGTH} or fewer (a sliding window: it "
                         "has never seen later positions)"] if passes else [])


def test_a_hugging_face_refusal_is_one_line_naming_each_problem(tmp_path, capsys):
    assert main(["export", "tiny-lstm", "--format", "hf", "--out", str(tmp_path / "hf")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("tfstudio export: this graph cannot be exported as a Hugging Face ")
    assert "rnn: blocks of type 'rnn' have no counterpart" in err and " - " not in err
    assert not (tmp_path / "hf").exists()

