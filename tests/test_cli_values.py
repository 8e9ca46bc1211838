"""The odd values of issue 42 end in one line naming the flag (or the path) and exit 2: each was
an internal error (exit 3), a segfault, exit 1, a raw "[Errno 30]" or accepted without a word."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
from odd_paths import FULL_DEVICE, read_only_folder

from tfstudio.cli import main
from tfstudio.cli.train import failure_exit
from tfstudio.data import build_tokenizer, load_corpus
from tfstudio.train.events import Failed

pytestmark = pytest.mark.usefixtures("private_caches")

TINY = ["--corpus", "sample:small", "--steps", "1", "--batch-size", "2", "--seq-len", "16",
        "--eval-every", "0"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("values") / "run"
    assert main(["train", "tiny-gpt", "--out", str(out), *TINY]) == 0
    return out


def gui_env(tmp_path) -> dict:
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen",
            "TFSTUDIO_DATA_DIR": str(tmp_path / "data")}


def one_line(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("command,flag,value", [
    ("generate", "--temperature", "nan"),
    ("generate", "--temperature", "1e-300"),
    ("generate", "--temperature", "inf"),
    ("generate", "--top-p", "1e-300"),
    ("generate", "--seed", str(2 ** 64)),
    ("explain", "--temperature", "nan"),
])
def test_a_sampling_value_that_broke_sampling_is_one_line_naming_the_flag(
        run, capsys, command, flag, value):
    capsys.readouterr()
    small = ["--max-new-tokens", "2"] if command == "generate" else ["--text", "ab"]
    assert main([command, str(run), *small, flag, value]) == 2
    line = one_line(capsys)
    assert line.startswith(f"tfstudio {command}: argument {flag}: takes ") and value in line


def test_the_largest_seed_torch_takes_is_accepted(run, capsys):
    assert main(["generate", str(run), "--max-new-tokens", "2", "--seed", str(2 ** 64 - 1)]) == 0


@pytest.mark.parametrize("flag,value", [("--grad-clip", "nan"), ("--grad-clip", "-1"),
                                        ("--min-lr-ratio", "7"), ("--lr", "inf")])
def test_a_training_value_out_of_range_is_refused_before_anything_is_written(
        tmp_path, capsys, flag, value):
    out = tmp_path / "run"
    assert main(["train", "tiny-gpt", "--out", str(out), *TINY, flag, value]) == 2
    line = one_line(capsys)
    assert line.startswith(f"tfstudio train: argument {flag}: takes ") and f"'{value}'" in line
    assert not out.exists()


def test_values_at_the_edges_of_the_ranges_train(tmp_path, capsys):
    assert main(["train", "tiny-gpt", "--out", str(tmp_path / "run"), *TINY, "--grad-clip", "0",
                 "--min-lr-ratio", "1"]) == 0


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_eval_on_cuda_without_cuda_is_one_line(run, capsys):
    capsys.readouterr()
    assert main(["eval", str(run), "--device", "cuda"]) == 2
    line = one_line(capsys)
    assert line.startswith("tfstudio eval: argument --device: ") and "no CUDA GPU" in line


def test_a_window_larger_than_any_screen_is_one_line_not_a_crash(tmp_path):
    # a subprocess: before, Qt died of a segmentation fault (it would take pytest with it)
    shot = tmp_path / "big.png"
    done = subprocess.run([sys.executable, "-m", "tfstudio", "gui", "--screenshot", str(shot),
                           "--size", "100000x100000"], capture_output=True, text=True,
                          timeout=120, env=gui_env(tmp_path))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "tfstudio gui: argument --size: takes a width from 1 to 8192 and a height from 1 to 8192 "
        "pixels; got '100000x100000'; see `tfstudio gui -h` for the options"]
    assert not shot.exists()


def test_a_word_vocabulary_larger_than_the_corpus_says_it_is_capped(tmp_path, capsys):
    words = build_tokenizer("word:1000000", load_corpus("sample:small")).ordinary_vocab_size
    assert words < 1000000
    for asked, says in ((99999999999, True), (words, False), (words - 1, False)):
        out = tmp_path / f"run-{asked}"
        assert main(["train", "tiny-gpt", "--out", str(out), *TINY,
                     "--tokenizer", f"word:{asked}"]) == 0
        notes = [line for line in capsys.readouterr().err.splitlines() if "capped" in line]
        assert notes == ([f"tfstudio train: note: --tokenizer word:{asked} asks for {asked:,} "
                          f"words, but the corpus has {words:,} distinct words: the vocabulary "
                          f"is capped at those {words:,} (as --tokenizer word:{words})"]
                         if says else [])


@pytest.mark.parametrize("command", ["train", "export"])
def test_an_out_folder_that_cannot_be_written_is_a_sentence_naming_it(
        run, tmp_path, capsys, command):
    out = read_only_folder(tmp_path) / "new-run"
    argv = (["train", "tiny-gpt", "--out", str(out), *TINY] if command == "train" else
            ["export", str(run), "--out", str(out)])
    capsys.readouterr()
    assert main(argv) == 2
    line = one_line(capsys)
    assert line.startswith(f"tfstudio {command}: {out} is not open to this user")
    assert "[Errno" not in line and line.endswith("choose a path you can use")


@pytest.mark.parametrize("reason,message", [
    ("nan", "the loss became nan at step 3. Lower the learning rate"),
    ("oom", "out of memory at step 1; lower --batch-size"),
    ("disk", "the disk is full"),
    ("refused", "--out holds a run"),
])
def test_a_failed_run_exits_2_with_its_line(capsys, reason, message):
    assert failure_exit(Failed(3, reason, message)) == 2
    assert one_line(capsys) == f"tfstudio train: {message}"


def test_an_os_error_in_a_failed_run_reads_as_a_sentence(capsys):
    event = Failed(0, "error", "OSError: [Errno 30] Read-only file system: '/mnt/ro/run'")
    assert failure_exit(event) == 2
    assert one_line(capsys) == ("tfstudio train: /mnt/ro/run is on a read-only disk; "
                                "choose a writable folder")


@pytest.mark.slow  # renders the window: 3-8 s
@pytest.mark.skipif(not FULL_DEVICE.exists(), reason="no /dev/full here")
def test_a_screenshot_that_cannot_be_written_exits_2_with_a_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tfstudio", "gui", "--screenshot",
                           str(FULL_DEVICE), "--size", "200x150"], capture_output=True,
                          text=True, timeout=120,
                          env=gui_env(tmp_path))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"tfstudio gui: --screenshot {FULL_DEVICE} is not a file; name a .png or .jpg file to "
        "write")
    assert FULL_DEVICE.is_char_device()  # the device is still there, never renamed over


def test_every_numeric_training_setting_has_a_checked_flag():
    from dataclasses import fields

    from tfstudio.cli.train import SETTING_TYPES
    from tfstudio.runs.config import TrainConfig
    numeric = {f.name for f in fields(TrainConfig)
               if type(getattr(TrainConfig(), f.name)) in (int, float)}
    assert numeric <= set(SETTING_TYPES), numeric - set(SETTING_TYPES)
