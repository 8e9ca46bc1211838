"""Starting a run: what its imports cost, made as each is first needed with the cyclic collector
on (before) or all at once with it off and then frozen (``tfstudio/train/preload.py``).

Fresh processes, interleaved so a load spike hits all alike, compared in the same run:
  torch      - ``python -c "import torch, torch._dynamo"``: what any run must import (CPU)
  cli before - ``tfstudio train tiny-gpt --steps 1``, its imports as each is first needed (CPU)
  cli now    - the same command as it is (CPU)
  read before, read now - ``tfstudio generate`` of 8 tokens from that run, likewise (CPU)
  app before - the app's first run of a session: wall time from ``TrainingProcess.start`` to
               its first step, its fork server importing ``preload.TRAINING`` as plain imports
  app now    - the same with the fork server's preload as it is (``train/fork_server.py``)
CPU is user + sys of the process (``getrusage`` of the children); the app's rows are wall
time, which the user waits, and include the fork server's start.

    python bench/bench_run_startup.py [--runs 7] [--no-write]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from report import replace_section  # bench/ is on sys.path

SECTION = "## Starting a run: imports frozen"
ENV = dict(os.environ, OMP_NUM_THREADS="1")
TRAIN = ["train", "tiny-gpt", "--steps", "1", "--batch-size", "2", "--seq-len", "16",
         "--eval-every", "0", "--force"]
GENERATE = ["generate", "--prompt", "Once", "--max-new-tokens", "8"]
CLI_BEFORE = ("import sys\nfrom tfstudio.train import preload\n"
              "preload.import_frozen = lambda modules: None  # imported as each is first needed\n"
              "from tfstudio.cli import main\nsys.exit(main(sys.argv[1:]))")
# the app's first run: prints the seconds from start to its first step
APP = """
import sys, tempfile, time
from tfstudio.presets import load_preset
from tfstudio.runs.config import TrainConfig
from tfstudio.train import child, preload
if __name__ == "__main__":
    if sys.argv[1] == "before":
        child.PRELOAD = preload.TRAINING
    config = TrainConfig(corpus="sample:small", tokenizer="byte", steps=3, batch_size=2,
                         seq_len=16, eval_every=0)
    start = time.perf_counter()
    run = child.TrainingProcess(load_preset("tiny-gpt"), config, tempfile.mkdtemp())
    run.start()
    first = next(time.perf_counter() - start for e in run.events() if e.kind == "StepMetrics")
    run.send("stop")
    for _ in run.events():
        pass
    print(first)
"""


def cpu_seconds(cmd: list[str]) -> float:
    """The user + sys CPU of one fresh process running ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr.decode()}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def first_step_seconds(when: str) -> float:
    done = subprocess.run([sys.executable, "-c", APP, when], capture_output=True, text=True,
                          env=ENV, check=True)
    return float(done.stdout.split()[-1])


def measure(runs: int) -> dict[str, list[float]]:
    out = str(Path(tempfile.mkdtemp(prefix="tfstudio-bench-")) / "run")
    probes = {
        "torch": lambda: cpu_seconds([sys.executable, "-c", "import torch, torch._dynamo"]),
        "cli before": lambda: cpu_seconds([sys.executable, "-c", CLI_BEFORE, *TRAIN, "--out", out]),
        "cli now": lambda: cpu_seconds([sys.executable, "-m", "tfstudio", *TRAIN, "--out", out]),
        "read before": lambda: cpu_seconds([sys.executable, "-c", CLI_BEFORE, *GENERATE, out]),
        "read now": lambda: cpu_seconds([sys.executable, "-m", "tfstudio", *GENERATE, out]),
        "app before": lambda: first_step_seconds("before"),
        "app now": lambda: first_step_seconds("now"),
    }
    probes["cli now"]()  # the file cache warmed once, as a second run finds it
    times: dict[str, list[float]] = {name: [] for name in probes}
    for _ in range(runs):
        for name, probe in probes.items():
            times[name].append(probe())
    return times


def report(times: dict[str, list[float]], runs: int) -> str:
    median = {name: statistics.median(values) for name, values in times.items()}
    rows = [("torch", '`python -c "import torch, torch._dynamo"` (reference)', "CPU"),
            ("cli before", "`tfstudio train tiny-gpt --steps 1`, each import where first needed, "
                           "collector on (before)", "CPU"),
            ("cli now", "`tfstudio train tiny-gpt --steps 1` (imports frozen)", "CPU"),
            ("read before", "`tfstudio generate RUN --max-new-tokens 8`, torch imported "
                            "with the collector on (before)", "CPU"),
            ("read now", "`tfstudio generate RUN --max-new-tokens 8` (torch frozen)", "CPU"),
            ("app before", "the app's first run, start to first step; fork server's imports "
                           "plain (before)", "wall"),
            ("app now", "the app's first run, start to first step (fork server's imports "
                        "frozen)", "wall")]
    lines = [f"Fresh processes, median and best of {runs} interleaved runs (`python "
             f"bench/bench_run_startup.py --runs {runs}`), {os.cpu_count()} CPU cores, Python "
             f"{sys.version.split()[0]}, one torch thread.", "",
             "| process | measure | median (s) | best (s) |", "| --- | --- | ---: | ---: |"]
    lines += [f"| {words} | {measure} | {median[name]:.2f} | {min(times[name]):.2f} |"
              for name, words, measure in rows]
    lines += ["", f"- command line: now / before {median['cli now'] / median['cli before']:.2f} "
                  f"({median['cli before'] - median['cli now']:.2f} CPU-s less a run)",
              f"- reading a run: now / before {median['read now'] / median['read before']:.2f} "
              f"({median['read before'] - median['read now']:.2f} CPU-s less)",
              f"- app: now / before {median['app now'] / median['app before']:.2f} "
              f"({median['app before'] - median['app now']:.2f} s sooner to the first step)"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-write", action="store_true", help="print, leave BENCHMARKS.md")
    args = parser.parse_args()
    body = report(measure(args.runs), args.runs)
    print(body)
    if not args.no_write:
        replace_section(SECTION, body)


if __name__ == "__main__":
    main()
