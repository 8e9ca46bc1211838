"""The three runs of the report that ran out of memory are refused in the CLI before any model
is built: exit 2, one line naming what the run needs, what the machine has, and the fix.

In-process and with the machine's free memory fixed (the report's 23 GB), so the outcome does
not depend on where the suite runs; the compiler is replaced by one that fails the test, so a
refusal that came only after building the model would be caught. (How fast, and at what peak
RSS, a fresh process is refused: bench/bench_preflight.py.)"""
import re

import pytest

import tfstudio.compiler
from tfstudio.cli import main
from tfstudio.runs import preflight

MACHINE = 23 * 10**9  # bytes free on the machine of the report
UNITS = {"TB": 1e12, "GB": 1e9, "MB": 1e6, "kB": 1e3}


def _bytes(text: str) -> float:
    number, unit = text.split()
    return float(number.replace(",", "")) * UNITS[unit]


@pytest.fixture
def machine(monkeypatch):
    monkeypatch.setattr(preflight, "available_memory", lambda device: (MACHINE, "this machine"))

    def never(*args, **kwargs):
        raise AssertionError("the model was built before the refusal")
    monkeypatch.setattr(tfstudio.compiler, "compile_graph", never)


def refusal(args, tmp_path, capsys) -> str:
    out = tmp_path / "run"
    assert main(["train", *args, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.strip().splitlines()
    assert line.startswith("tfstudio train: training ") and "Traceback" not in captured.err
    assert line.endswith("or pass --no-memory-check to try anyway")
    assert not out.exists()  # nothing written for a run that never started
    need = _bytes(re.search(r"needs about ([\d.,]+ [kMGT]?B)", line).group(1))
    free = _bytes(re.search(r"has ([\d.,]+ [kMGT]?B) free", line).group(1))
    assert free == MACHINE and need > free
    return line


def test_gpt3_175b_is_refused_as_a_model_too_big(machine, tmp_path, capsys):
    line = refusal(["gpt3-175b", "--steps", "1", "--batch-size", "1", "--seq-len", "16",
                    "--device", "cpu"], tmp_path, capsys)
    # ~175e9 parameters, each 4 bytes of weights, 4 of gradients and 8 of AdamW moments
    need = _bytes(re.search(r"needs about ([\d.,]+ [kMGT]?B)", line).group(1))
    assert 16 * 174e9 < need < 16 * 177e9 + 2e9
    assert "the model alone" in line and "smaller preset" in line
    assert "--batch-size" not in line.split(" free")[1]  # a smaller batch cannot help


def test_gpt2_xl_is_refused_on_a_23_gb_machine(machine, tmp_path, capsys):
    line = refusal(["gpt2-xl", "--steps", "1", "--device", "cpu"], tmp_path, capsys)
    # 1.56e9 parameters x 16 bytes is over 23 GB before any activation
    assert "the model alone" in line and "smaller preset" in line


def test_a_huge_batch_is_refused_with_a_batch_that_fits(machine, tmp_path, capsys):
    line = refusal(["tiny-gpt", "--batch-size", "20000000"], tmp_path, capsys)
    fits = int(re.search(r"--batch-size (\d+) or less", line).group(1))
    accum = int(re.search(r"--grad-accum (\d+)", line).group(1))
    assert 1 <= fits < 20_000_000 and fits * accum >= 20_000_000  # same effective batch
    assert "effective batch of 20000000" in line


def test_a_model_that_fills_the_machine_is_not_told_to_shorten_its_sequences():
    """gpt2-xl's weights, gradients and AdamW state (23.6 GB) fit in 24.6 GB but leave under
    the fifth kept for working space: no batch size or length helps, a smaller model does."""
    graph = tfstudio.load_graph("gpt2-xl")
    need = preflight.training_need(graph, batch=16, seq_len=64, precision="fp32")
    room = int(need.fixed / 0.9)  # the model takes 90% of what is free
    with pytest.raises(preflight.MemoryRefusal) as caught:
        preflight.check_training_memory(graph, batch=16, seq_len=64, grad_accum=1,
                                        precision="fp32", device="cpu", available=room)
    fix = str(caught.value).split("free; ")[1]
    assert "smaller preset" in fix and "--seq-len" not in fix and "--batch-size" not in fix
