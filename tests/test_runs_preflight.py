"""Memory pre-flight: runs too big for the device are refused before anything is allocated,
with both numbers and the fix; --no-memory-check lets them try."""
import os
import subprocess
import sys
import time

import pytest

import tfstudio
from tfstudio.cli import main
from tfstudio.runs import preflight
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.preflight import MemoryRefusal, check_model_memory, check_training_memory
from tfstudio.train.trainer import Trainer

ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


# Linux keeps a process's peak RSS across fork and exec, so a child forked from this (large)
# test process would report our size as its own: a small launcher forks the measured command
LAUNCHER = ("import os, subprocess, sys; child = subprocess.Popen(sys.argv[2:]); "
            "_, status, usage = os.wait4(child.pid, 0); "
            "open(sys.argv[1], 'w').write(f'{os.waitstatus_to_exitcode(status)} "
            "{usage.ru_maxrss}')")


def run_measured(args, tmp_path):
    """Run ``tfstudio ARGS`` in a child; (exit code, stderr, peak RSS in bytes, seconds)."""
    t0 = time.perf_counter()
    result = tmp_path / "measured.txt"
    with open(tmp_path / "err.txt", "w") as err:
        subprocess.run([sys.executable, "-c", LAUNCHER, str(result), sys.executable, "-m",
                        "tfstudio", *args], env=ENV, stdout=subprocess.DEVNULL, stderr=err,
                       check=True)
    seconds = time.perf_counter() - t0
    code, peak_kib = (int(v) for v in result.read_text().split())
    return code, (tmp_path / "err.txt").read_text(), peak_kib * 1024, seconds


@pytest.mark.parametrize("args", [
    ["gpt3-175b", "--steps", "1", "--batch-size", "1", "--seq-len", "16", "--device", "cpu"],
    ["tiny-gpt", "--batch-size", "20000000", "--device", "cpu"],
])
@pytest.mark.slow
def test_too_big_runs_are_refused_before_allocating(args, tmp_path):
    code, err, peak, seconds = run_measured(["train", *args, "--out", str(tmp_path / "r")],
                                            tmp_path)
    print(f"{args[0]}: refused in {seconds:.1f}s at {peak / 1e6:.0f} MB peak RSS")
    assert code == 2, err
    [line] = err.strip().splitlines()
    assert line.startswith("tfstudio train: training ") and "free" in line
    assert "--no-memory-check" in line and "Traceback" not in err
    assert peak < 1e9  # the model was never built: only the interpreter, torch and the graph
    assert not (tmp_path / "r").exists()  # a refused run leaves nothing behind


def test_the_fix_names_a_batch_that_fits_or_a_smaller_model():
    graph = tfstudio.load_graph("tiny-gpt")
    with pytest.raises(MemoryRefusal) as caught:
        check_training_memory(graph, batch=20_000_000, seq_len=64, grad_accum=1,
                              precision="fp32", device="cpu", available=24 * 10**9)
    message = str(caught.value)
    assert "24.0 GB free" in message and "--batch-size" in message and "--grad-accum" in message
    # the suggested batch fits
    fits = int(message.split("--batch-size ")[1].split()[0])
    check_training_memory(graph, batch=fits, seq_len=64, grad_accum=1, precision="fp32",
                          device="cpu", available=24 * 10**9)
    # gpt2-xl on the 23 GB machine of the report: the model itself is too big
    with pytest.raises(MemoryRefusal, match="smaller preset"):
        check_training_memory(tfstudio.load_graph("gpt2-xl"), batch=16, seq_len=64,
                              grad_accum=1, precision="fp32", device="cpu",
                              available=23 * 10**9)


def test_the_need_counts_what_training_holds():
    """Weights and gradients in fp32 and two fp32 AdamW moments per parameter, counted on the
    compiled model by torch."""
    from tfstudio.compiler import compile_graph
    graph = tfstudio.load_graph("tiny-gpt")
    n = sum(p.numel() for p in compile_graph(graph).parameters())
    need = preflight.training_need(graph, batch=4, seq_len=32, precision="fp32")
    assert (need.weights, need.gradients, need.optimizer) == (4 * n, 4 * n, 8 * n)
    half = preflight.training_need(graph, batch=4, seq_len=32, precision="bf16")
    assert half.weights == need.weights and half.activations == need.activations // 2
    sharded = preflight.training_need(graph, batch=4, seq_len=32, precision="fp32",
                                      world_size=2, sharded=True)
    assert sharded.optimizer == need.optimizer // 2
    assert sharded.activations == need.activations // 2


def test_the_trainer_refuses_and_no_memory_check_overrides(tmp_path, monkeypatch):
    monkeypatch.setattr(preflight, "available_memory", lambda device: (10**6, "this machine"))
    cfg = dict(corpus="sample:small", steps=1, batch_size=2, seq_len=16, eval_every=0)
    end = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**cfg), run_dir=tmp_path).run()
    assert (end.kind, end.reason) == ("Failed", "refused")
    assert "1.0 MB free" in end.message and not (tmp_path / "graph.json").exists()
    end = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**cfg, no_memory_check=True),
                  run_dir=tmp_path).run()
    assert end.kind == "Finished"


def test_loading_a_run_checks_the_weights_fit(tmp_path, monkeypatch, capsys):
    Trainer(tfstudio.load_graph("tiny-gpt"),
            TrainConfig(corpus="sample:small", steps=1, batch_size=2, seq_len=16, eval_every=0),
            run_dir=tmp_path).run()
    monkeypatch.setattr(preflight, "available_memory", lambda device: (10**5, "this machine"))
    assert main(["generate", str(tmp_path), "--max-new-tokens", "2"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("tfstudio generate: loading ") and "100.0 kB free" in line


def test_import_side_check_counts_two_copies():
    graph = tfstudio.load_graph("tiny-gpt")
    from tfstudio.compiler import compile_graph
    n = sum(p.numel() for p in compile_graph(graph).parameters())
    check_model_memory(graph, copies=2, available=8 * n)
    with pytest.raises(MemoryRefusal, match="importing x"):
        check_model_memory(graph, copies=2, available=8 * n - 1, what="importing x")


def test_import_hf_refuses_a_checkpoint_too_big_for_the_machine(tmp_path, capsys):
    import json
    folder = tmp_path / "gpt3"  # GPT-3's shape: 175B parameters, 1.4 TB as two fp32 copies
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": 96,
        "n_embd": 12288, "n_head": 96, "n_positions": 2048, "vocab_size": 50257}))
    (folder / "model.safetensors").write_bytes(b"")  # never read: refused before the weights
    assert main(["import-hf", str(folder), "--out", str(tmp_path / "run")]) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith("tfstudio import-hf: importing") and "--no-memory-check" in line
    d, layers, vocab, positions = 12288, 96, 50257, 2048
    # GPT-2's count: per layer 12 d^2 + 13 d (QKV, output, two FFN matrices, biases, two
    # LayerNorms), embeddings and positions, the final LayerNorm; the head is tied
    params = layers * (12 * d * d + 13 * d) + vocab * d + positions * d + 2 * d
    assert f"{params:,} parameters" in line
    assert not (tmp_path / "run").exists()
