"""The CPU a one-step ``tfstudio train`` spends, mostly importing torch and torch._dynamo.

Three fresh processes, interleaved so a load spike hits all alike, their CPU (user + sys, from
``os.wait4``) compared in the same run:
  torch      - ``python -c "import torch, torch._dynamo"``: what any run must import
  collected  - the one-step run with each import made where it is first needed, the cyclic
               collector on, as every run made them before ``tfstudio/train/preload.py``
  tfstudio   - ``tfstudio train tiny-gpt --steps 1`` as it is: imports frozen
                 (``preload.import_frozen``)

    python bench/bench_cli_startup.py [--runs 7] [--no-write]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from report import replace_section  # noqa: E402  (bench/ is on sys.path)

SECTION = "## CLI: a one-step run's CPU, imports frozen"
TRAIN = ["train", "tiny-gpt", "--steps", "1", "--batch-size", "2", "--seq-len", "16",
         "--eval-every", "0", "--force"]
COLLECTED = ("import sys\nfrom tfstudio.train import preload\n"
             "preload.import_frozen = lambda modules: None  # imported as each is first needed\n"
             "from tfstudio.cli import main\nsys.exit(main(sys.argv[1:]))")


def cpu_seconds(cmd: list[str]) -> float:
    """The user + sys CPU of one fresh process running ``cmd``."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr.read().decode()}")
    proc.stderr.close()
    return usage.ru_utime + usage.ru_stime


def measure(runs: int) -> dict[str, list[float]]:
    out = Path(tempfile.mkdtemp(prefix="tfstudio-bench-")) / "run"
    commands = {
        "torch": [sys.executable, "-c", "import torch, torch._dynamo"],
        "collected": [sys.executable, "-c", COLLECTED, *TRAIN, "--out", str(out)],
        "tfstudio": [sys.executable, "-m", "tfstudio", *TRAIN, "--out", str(out)],
    }
    cpu_seconds(commands["tfstudio"])  # the file cache warmed once, as a second run finds it
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, cmd in commands.items():
            times[name].append(cpu_seconds(cmd))
    return times


def report(times: dict[str, list[float]], runs: int) -> str:
    median = {name: statistics.median(values) for name, values in times.items()}
    rows = [("torch", '`python -c "import torch, torch._dynamo"` (reference)'),
            ("collected", "the same run, each import where first needed, collector on (before)"),
            ("tfstudio", "`tfstudio train tiny-gpt --steps 1` (imports frozen)")]
    lines = [f"CPU (user + sys) of a fresh process, median and best of {runs} interleaved runs "
             f"(`python bench/bench_cli_startup.py --runs {runs}`), {os.cpu_count()} CPU cores, "
             f"Python {sys.version.split()[0]}.", "",
             "| process | median (CPU-s) | best (CPU-s) |", "| --- | ---: | ---: |"]
    lines += [f"| {words} | {median[name]:.2f} | {min(times[name]):.2f} |"
              for name, words in rows]
    lines += ["", f"- frozen / collected: {median['tfstudio'] / median['collected']:.2f} "
                  f"({median['collected'] - median['tfstudio']:.2f} CPU-s less a run)."]
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
