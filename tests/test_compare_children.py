"""compare's child trainers: they end with their parent, a run folder another live process is
writing is left untouched, and a child that fails is quoted from its log."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
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




@dataclass
class ChildThatPrints(runner.RunSpec):
    """A run whose child process is ``script`` (a Python one-liner) instead of a trainer."""
    script: str = ""

    def command(self, executable=None):
        return [sys.executable, "-c", self.script]


def test_a_failing_child_is_quoted_by_its_last_line_and_its_log_is_named(tmp_path):
    base = spec(tmp_path)
    said = "print('step 1 loss 5.5'); print('tfstudio train: out of memory'); raise SystemExit(3)"
    runs = [ChildThatPrints("a", "a", 1, base.graph_path, tmp_path / "a", base.config, said),
            ChildThatPrints("b", "b", 2, base.graph_path, tmp_path / "b", base.config,
                            "raise SystemExit(4)"),
            ChildThatPrints("c", "c", 3, base.graph_path, tmp_path / "c", base.config, "")]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "train.log").write_text("an earlier attempt's last line\n")
    lines = []
    failures = runner.train_in_processes(runs, 1, lines.append)
    assert failures == [(runs[0], "tfstudio train: out of memory"),
                        (runs[1], "exit status 4")]   # silent: not the earlier attempt's line
    assert lines == ["started a (seed 1)", f"a (seed 1) failed; see {tmp_path / 'a' / 'train.log'}",
                     "started b (seed 2)", f"b (seed 2) failed; see {tmp_path / 'b' / 'train.log'}",
                     "started c (seed 3)", "finished c (seed 3)"]
    assert (tmp_path / "b" / "train.log").read_text() == "an earlier attempt's last line\n"


@pytest.mark.slow  # a real trainer process: ~3 s of CPU importing torch before it refuses
def test_a_trainer_that_refuses_is_quoted_from_its_log(tmp_path):
    s = spec(tmp_path)
    s.graph_path.write_text("{")  # the trainer refuses the graph file in one line, exit 2
    failures = runner.train_in_processes([s], 1)
    assert [run for run, _ in failures] == [s]
    assert failures[0][1].startswith(f"tfstudio train: {s.graph_path}: not valid JSON")
    assert (s.run_dir / "train.log").read_text().rstrip() == failures[0][1]

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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_each_child_is_started_to_receive_sigterm_when_its_parent_dies(tmp_path):
    """The fast half of the test below: the child asks the kernel which signal its parent's
    death sends it (prctl PR_GET_PDEATHSIG), and says it in its log."""
    base = spec(tmp_path)
    asks = ("import ctypes; n = ctypes.c_int(); "
            "ctypes.CDLL(None).prctl(2, ctypes.byref(n)); print('death signal', n.value)")
    child = ChildThatPrints("a", "a", 1, base.graph_path, tmp_path / "a", base.config, asks)
    assert runner.train_in_processes([child], 1) == []
    assert (tmp_path / "a" / "train.log").read_text().strip() == f"death signal {signal.SIGTERM}"


def wait_for(condition, what: str, timeout: float = 300.0) -> None:
    """Poll ``condition`` until it holds; the bound only stops a broken run from hanging."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen in {timeout:.0f} s"
        time.sleep(0.05)


def _lock_pid(lock: Path) -> int | None:
    try:
        return int(lock.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


@pytest.mark.slow
def test_the_child_trainer_dies_with_its_parent(tmp_path):
    s = spec(tmp_path)
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path)],
                              stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert parent.stdout.readline().startswith("started v")
    lock = s.run_dir / ".lock"
    # the trainer's PID, written when it took the folder (its signal handlers are set by then)
    wait_for(lambda: _lock_pid(lock) is not None, "the child trainer taking its run folder")
    child = _lock_pid(lock)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    try:
        wait_for(lambda: not _alive(child), "the child trainer ending after its parent")
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)  # leave no trainer behind when this fails


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (ended, not yet reaped by init) counts as ended
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False
