"""compare's child trainers: they end with their parent, and a run folder another live
process is writing is left untouched."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tfstudio.experiments import runner
from tfstudio.runs import TrainConfig
from tfstudio.runs.lock import RunLock


def spec(tmp_path: Path, steps: int = 5) -> runner.RunSpec:
    from tfstudio import load_graph
    from tfstudio.graph import save_graph
    graph_path = tmp_path / "g.json"
    save_graph(load_graph("tiny-gpt"), graph_path)
    config = TrainConfig(corpus="sample:small", tokenizer="char", steps=steps, batch_size=2,
                         seq_len=16, eval_every=steps)
    return runner.RunSpec("v", "v", 1, graph_path, tmp_path / "run", config)


def test_a_run_folder_written_by_a_live_process_is_left_alone(tmp_path):
    s = spec(tmp_path)
    s.run_dir.mkdir()
    (s.run_dir / "train.log").write_text("the live run's log\n")
    with RunLock(s.run_dir):  # another writer holds the folder
        failures = runner.train_in_processes([s], 1)
    assert len(failures) == 1 and "being written by another training run" in failures[0][1]
    assert (s.run_dir / "train.log").read_text() == "the live run's log\n"
    assert sorted(p.name for p in s.run_dir.iterdir()) == [".lock", "train.log"]


PARENT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from tfstudio.experiments import runner
    from tfstudio.runs import TrainConfig
    tmp = Path(sys.argv[1])
    config = TrainConfig(corpus="sample:small", tokenizer="char", steps=100000, batch_size=2,
                         seq_len=16, eval_every=100000, no_memory_check=True)
    spec = runner.RunSpec("v", "v", 1, tmp / "g.json", tmp / "run", config)
    runner.train_in_processes([spec], 1, lambda line: print(line, flush=True))
""")


@pytest.mark.slow
def test_the_child_trainer_dies_with_its_parent(tmp_path):
    s = spec(tmp_path)
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path)],
                              stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert parent.stdout.readline().startswith("started v")
    lock = s.run_dir / ".lock"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (lock.exists() and lock.read_text().strip()):
        time.sleep(0.2)
    child = int(lock.read_text())  # the trainer's PID, written when it took the folder
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.2)
    survived = _alive(child)
    if survived:
        os.kill(child, signal.SIGKILL)  # leave no trainer behind when this fails
    assert not survived


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (ended, not yet reaped by init) counts as ended
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False
