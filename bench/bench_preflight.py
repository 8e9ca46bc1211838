"""How fast, and in how little memory, a training run too big for the machine is refused.

The memory pre-flight (tfstudio.runs.preflight) must refuse these before anything is allocated:
  gpt3-175b  - ``train gpt3-175b --steps 1 --batch-size 1 --seq-len 16 --device cpu``: the model
               alone is terabytes
  gpt2-xl    - ``train gpt2-xl --steps 1 --device cpu``: ~29 GB at the default 16 x 64 batch,
               more than a 24 GB machine has (a machine with more memory runs it: the table
               says what happened)
  big batch  - ``train tiny-gpt --batch-size 20000000``: a tiny model, terabytes of activations
Targets: each refused (exit 2, one line) in under 5 s with a peak RSS under 1 GB.

References measured in the same run, on the same machine and load:
  import torch    - ``python -c "import torch"``: the floor for any command that needs torch
  inspect         - ``tfstudio inspect tiny-gpt``: graph layer + cost model, no training
Each row is a fresh process, timed from spawn to exit; its peak RSS comes from ``wait4`` (the
kernel's high-water mark for the child; this script imports nothing big, so a forked child
does not start with a large inherited footprint). Rows are interleaved so load spikes hit all
alike.

    python bench/bench_preflight.py [--runs 3] [--write]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TARGET_S = 5.0
TARGET_BYTES = 10**9
TITLE = "## Memory pre-flight refusals"

REFERENCES = {
    "import torch": ["-c", "import torch"],
    "inspect": ["-m", "tfstudio", "inspect", "tiny-gpt"],
}
LABELS = {"import torch": '`python -c "import torch"`', "inspect": "`tfstudio inspect tiny-gpt`"}
REFUSALS = {
    "gpt3-175b": ["train", "gpt3-175b", "--steps", "1", "--batch-size", "1", "--seq-len", "16",
                  "--device", "cpu"],
    "gpt2-xl": ["train", "gpt2-xl", "--steps", "1", "--device", "cpu"],
    "big batch": ["train", "tiny-gpt", "--batch-size", "20000000"],
}


@dataclass
class Runs:
    """One command's fresh processes: seconds, peak RSS (bytes), exit codes, last stderr line."""
    command: list[str]
    seconds: list[float] = field(default_factory=list)
    peaks: list[int] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    line: str = ""
    out_left: bool = False   # the refused run's --out folder exists afterwards


def run_once(args: list[str], env: dict, out: Path | None) -> tuple[float, int, int, str]:
    """(seconds from spawn to exit, peak RSS in bytes, exit code, last line of stderr)."""
    cmd = [sys.executable, *args] + (["--out", str(out)] if out is not None else [])
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
    return seconds, usage.ru_maxrss * 1024, child.returncode, (lines[-1] if lines else "")


def measure(runs: int) -> dict[str, Runs]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env["TFSTUDIO_DATA_DIR"] = tempfile.mkdtemp(prefix="tfstudio-bench-")
    commands = {**REFERENCES, **REFUSALS}
    results = {name: Runs(args) for name, args in commands.items()}
    # warm the file cache once, as a second launch would find it
    run_once(["-m", "tfstudio", *REFUSALS["gpt3-175b"]], env, None)
    for _ in range(runs):  # interleaved, so a load spike hits every row alike
        for name, args in commands.items():
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "run" if name in REFUSALS else None
                seconds, peak, code, line = run_once(
                    ["-m", "tfstudio", *args] if name in REFUSALS else args, env, out)
                r = results[name]
                r.seconds.append(seconds)
                r.peaks.append(peak)
                r.codes.append(code)
                r.line = line
                r.out_left |= out is not None and out.exists()
    return results


def _refused(r: Runs) -> bool:
    """Exit 2 every time, with the pre-flight's line, and no run folder left behind."""
    return (set(r.codes) == {2} and r.line.startswith("tfstudio train: training ")
            and not r.out_left)


def _met(r: Runs) -> bool:
    return (_refused(r) and statistics.median(r.seconds) < TARGET_S
            and max(r.peaks) < TARGET_BYTES)


def markdown(results: dict[str, Runs], runs: int) -> str:
    import psutil  # only for the machine line
    memory = psutil.virtual_memory()
    floor = statistics.median(results["import torch"].seconds)
    lines = [
        f"Command: `python bench/bench_preflight.py --runs {runs} --write`. Wall time from "
        f"spawning the process to its exit (median and worst of {runs} fresh processes, "
        "interleaved) and the child's peak RSS (`wait4`), on "
        f"{platform.machine()} with {os.cpu_count()} CPU cores and "
        f"{memory.total / 1e9:.1f} GB of memory ({memory.available / 1e9:.1f} GB available), "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f} at the end "
        "(the machine's other work slows every row alike; the ratio to `import torch` is the "
        "stable number). Targets: refused (exit 2) in under "
        f"{TARGET_S:.0f} s with a peak RSS under {TARGET_BYTES / 1e9:.0f} GB.",
        "",
        "| process | exit | median (s) | worst (s) | x `import torch` | peak RSS (MB) | target |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, r in results.items():
        med = statistics.median(r.seconds)
        label = LABELS.get(name) or f"`tfstudio {' '.join(r.command)}`"
        target = ("reference" if name in REFERENCES else "met" if _met(r) else "**NOT met**")
        codes = "/".join(str(c) for c in sorted(set(r.codes)))
        lines.append(f"| {label} | {codes} | {med:.2f} | {max(r.seconds):.2f} | "
                     f"{med / floor:.2f} | {max(r.peaks) / 1e6:.0f} | {target} |")
    lines += ["", "What each refusal printed (stderr, one line):", ""]
    for name in REFUSALS:
        r = results[name]
        left = "; its --out folder was created" if r.out_left else ""
        lines.append(f"- {name}: `{r.line}`{left}")
    lines += ["", "The refusal costs the interpreter and torch's import plus reading the graph "
              "and running the cost model on it (no tensor is allocated, so the 175B model is "
              "as cheap as the tiny one); `import torch` alone is the floor."]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per command")
    parser.add_argument("--write", action="store_true",
                        help=f"update the '{TITLE[3:]}' section of docs/BENCHMARKS.md")
    args = parser.parse_args()
    results = measure(args.runs)
    body = markdown(results, args.runs)
    print(f"{TITLE}\n\n{body}")
    if args.write:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from report import replace_section
        print(f"wrote {replace_section(TITLE, body)}")
    return 0 if all(_met(results[name]) for name in REFUSALS) else 1


if __name__ == "__main__":
    sys.exit(main())
