"""The memory pre-flight counts the least of free memory, a cgroup limit and the address-space
limit (``ulimit -v``), and refuses above 90% of it; an out-of-memory that still happens (torch's
CPU allocator says it as a RuntimeError) ends in the trainer's own out-of-memory line."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import tfstudio.runs.preflight as preflight
from tfstudio.presets import load_preset
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.preflight import MemoryRefusal, check_training_memory, training_need
from tfstudio.train.events import Failed
from tfstudio.train.trainer import Trainer

ROOT = Path(__file__).resolve().parents[2]
CPU_OOM = ("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
           "memory: you tried to allocate 12000000000000 bytes. Error code 12 (Cannot allocate "
           "memory)")


@pytest.mark.parametrize("error", [RuntimeError(CPU_OOM), MemoryError()],
                         ids=["cpu-allocator", "MemoryError"])
def test_an_out_of_memory_during_a_step_is_the_trainers_own_line(tmp_path, monkeypatch, error):
    def step(self):
        raise error
    monkeypatch.setattr(Trainer, "_train_step", step)
    config = TrainConfig(corpus="sample:small", tokenizer="byte", steps=2, batch_size=3,
                         seq_len=16, warmup_steps=0, eval_every=0, device="cpu")
    end = Trainer(load_preset("tiny-gpt"), config, run_dir=tmp_path / "run").run()
    assert isinstance(end, Failed) and end.reason == "oom"
    assert end.message == ("out of memory on cpu at step 1. Reduce the batch size (now 3; keep "
                           "the effective batch with grad_accum), the sequence length (now 16) "
                           "or the model's width/depth; on a GPU, bf16 halves activation memory")


def test_a_run_is_refused_above_90_percent_of_the_memory_measured(monkeypatch):
    graph = load_preset("tiny-gpt")
    need = training_need(graph, batch=2, seq_len=16, precision="fp32").total
    common = dict(graph=graph, batch=2, seq_len=16, grad_accum=1, precision="fp32",
                  device="cpu")
    free = -(-need * 10 // 9)  # the least free memory whose 90% holds the need
    monkeypatch.setattr(preflight, "available_memory", lambda device: (free, "this machine"))
    check_training_memory(**common)
    monkeypatch.setattr(preflight, "available_memory", lambda device: (free - 1, "this machine"))
    with pytest.raises(MemoryRefusal) as caught:
        check_training_memory(**common)  # it fits in what is free, but not with the margin
    assert f"this machine has {preflight.human_bytes(free - 1)} free (a job may use 90% of it, " \
           f"{preflight.human_bytes(int(0.9 * (free - 1)))})" in str(caught.value)


def address_space_limit(soft: int):
    """A preexec_fn that sets ``ulimit -v`` for the child only."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (soft, resource.RLIM_INFINITY))
    return limit


@pytest.mark.slow
def test_the_address_space_limit_counts_as_available_memory():
    script = ("import psutil, resource\n"
              "from tfstudio.runs.preflight import available_memory\n"
              "room, where = available_memory('cpu')\n"
              "soft = resource.getrlimit(resource.RLIMIT_AS)[0]\n"
              "vms = psutil.Process().memory_info().vms\n"
              "assert where == \"this process's address-space limit (ulimit -v)\", where\n"
              "assert 0 < room <= soft - vms + (64 << 20), (room, soft, vms)\n")
    vms_guess = 1 << 30  # python with psutil and the graph package: ~0.7 GB of address space
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120,
                          preexec_fn=address_space_limit(vms_guess + (256 << 20)))
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_ulimit_v_refuses_a_batch_it_cannot_hold_in_one_line(tmp_path):
    """``prlimit --as=4e9``: tiny-gpt at batch 4096 x 256 died as an internal error."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-m", "tfstudio", "train", "tiny-gpt", "--out", str(tmp_path / "run"),
         "--corpus", "sample:small", "--tokenizer", "byte", "--batch-size", "4096",
         "--seq-len", "256", "--steps", "1", "--eval-every", "0"],
        env=env, capture_output=True, text=True, timeout=180,
        preexec_fn=address_space_limit(4_000_000_000))
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "but this process's address-space limit (ulimit -v) has " in line
    assert "use --batch-size " in line
