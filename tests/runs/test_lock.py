"""One writer per run folder: a second writer is refused with the holder's PID, and a lock left
by a killed process is taken over."""
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tfstudio.runs.lock import RunLock, RunLocked

ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


def hold_lock(run_dir):
    """A child process that takes the run's lock, says so, and waits to be killed."""
    script = textwrap.dedent(f"""
        import time
        from tfstudio.runs.lock import RunLock
        RunLock({str(run_dir)!r}).acquire()
        print("locked", flush=True)
        time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=ENV,
                            text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


@pytest.mark.slow
def test_a_second_writer_is_refused_with_the_holders_pid_and_a_killed_ones_lock_is_taken(
        tmp_path):
    holder = hold_lock(tmp_path)
    try:
        with pytest.raises(RunLocked, match=f"process {holder.pid}"):
            RunLock(tmp_path).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    lock = RunLock(tmp_path)
    lock.acquire()  # the kernel dropped the dead process's lock
    assert (tmp_path / ".lock").read_text().strip() == str(os.getpid())
    lock.release()


def test_the_lock_is_released_when_its_holder_lets_go(tmp_path):
    with RunLock(tmp_path):
        with pytest.raises(RunLocked):
            RunLock(tmp_path).acquire()
    with RunLock(tmp_path):
        pass


def train_args(run_dir, steps):
    return ["train", "tiny-gpt", "--corpus", "sample:small", "--steps", str(steps),
            "--batch-size", "4", "--seq-len", "32", "--eval-every", "0", "--warmup-steps", "2",
            "--checkpoint-every", "5", "--device", "cpu", "--out", str(run_dir)]


@pytest.mark.slow
def test_two_trainings_into_one_folder_one_is_refused_and_nothing_mixes(tmp_path, capsys):
    from tfstudio.cli import main
    run = tmp_path / "R"
    first = subprocess.Popen([sys.executable, "-m", "tfstudio", *train_args(run, 40)], env=ENV,
                             stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    line = first.stderr.readline()  # "training tiny-gpt: ..." once it has started
    assert "training" in line, line
    first.send_signal(signal.SIGSTOP)  # hold it mid-run (still holding the lock), whatever
    try:                               # the machine's speed
        capsys.readouterr()
        # the second writer is this process: the lock is between processes, not commands
        second_code = main(train_args(run, 40))
        second_err = capsys.readouterr().err
    finally:
        first.send_signal(signal.SIGCONT)
    _, first_err = first.communicate(timeout=300)
    assert first.returncode == 0, first_err[-2000:]
    assert second_code == 2
    [said] = second_err.strip().splitlines()
    assert said.startswith("tfstudio train: ") and f"(process {first.pid})" in said
    assert "another training run" in said and "Traceback" not in second_err
    steps = [json.loads(l)["step"] for l in (run / "metrics.jsonl").read_text().splitlines()
             if json.loads(l)["kind"] == "StepMetrics"]
    assert steps == list(range(1, 41))
    assert not list((run / "checkpoints").glob(".*.partial"))


# ---------------------------------------------------------------- the edges of each case
def test_a_lock_file_holding_garbage_still_refuses_the_second_writer(tmp_path):
    """The holder's PID is read back for the message; bytes that are not a PID (a damaged or
    foreign file) give "another process", never an exception."""
    from tfstudio.runs.lock import RunLock, RunLocked
    first = RunLock(tmp_path)
    first.acquire()
    try:
        first.path.write_bytes(b"\xff\xfe\x00garbage")  # a second handle: flock is advisory
        with pytest.raises(RunLocked) as caught:
            RunLock(tmp_path).acquire()  # flock: a second open file conflicts, same process too
        assert str(caught.value) == (
            f"{tmp_path} is being written by another training run (another process); wait "
            "for it to end, stop it, or choose another --out")
        first.path.write_bytes(b"4321\n")
        with pytest.raises(RunLocked, match=r"\(process 4321\)"):
            RunLock(tmp_path).acquire()
    finally:
        first.release()
    RunLock(tmp_path).acquire()  # released: free again


def test_the_lock_is_made_with_its_folders_and_the_files_permissions(tmp_path):
    from tfstudio.runs.lock import RunLock, RunLocked
    lock = RunLock(tmp_path / "a" / "b")
    lock.acquire()
    umask = os.umask(0)
    os.umask(umask)
    assert (lock.path.stat().st_mode & 0o777) == 0o644 & ~umask
    assert lock.path.read_text() == f"{os.getpid()}\n"
    with pytest.raises(RunLocked):
        RunLock(tmp_path / "a" / "b").acquire()
    lock.release()
    assert not (tmp_path / "a" / "b").exists()  # made for the run, left as it was found


def test_releasing_leaves_a_folder_that_was_there_and_empties_the_pid(tmp_path):
    from tfstudio.runs.lock import RunLock
    lock = RunLock(tmp_path)
    lock.acquire()
    lock.release()
    assert tmp_path.is_dir() and lock.path.read_bytes() == b""  # no stale PID left behind
    with RunLock(tmp_path):  # free again
        pass
