"""How close the memory pre-flight's training estimate is to what a CPU run really takes.

For each preset, batch, length and tokenizer (byte, char, bpe:N, and ``wide:50257``: byte ids
under a 50,257-row embedding and LM head, GPT-2's width, since GPT-2's vocabulary files are not
on this machine and the memory depends on the head's width, not on which ids are fed): a fresh
process (``python -m tfstudio.train.calibrate``) notes its resident memory when the pre-flight
would run (a run's imports made, nothing built: ``resident``), trains
``--steps`` steps, and reports its peak RSS (``VmHWM``). The estimate of that peak is
tfstudio.runs.preflight.estimated_peak_rss: the resident memory, torch's working memory and
the step's need (weights, gradients, AdamW state, activations with the logits' gradients and
the allocator's slack). A ratio above 1 is a pessimistic estimate, below 1 an optimistic one.

    python bench/bench_preflight_accuracy.py [--cases tiny-gpt:64x256:char,...] [--steps 2]
        [--write]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from report import replace_section  # noqa: E402  (bench/ is on sys.path)

from tfstudio.runs.preflight import CPU_RUNTIME

TITLE = "## Memory pre-flight: estimate vs measured peak (CPU)"
ROOT = Path(__file__).resolve().parent.parent
# each case runs tfstudio.train.calibrate in a fresh process, so its peak is that case's alone
CASES = ("tiny-gpt:8x64:byte", "tiny-gpt:64x256:byte", "tiny-gpt:256x256:byte",
         "tiny-gpt:1024x256:byte", "tiny-llama:64x256:byte", "tiny-llama:256x256:byte",
         "tiny-mixtral:64x256:byte", "tiny-alibi-gpt:128x256:byte", "tiny-lstm:64x256:byte",
         "gpt2-small:2x256:byte", "gpt2-small:8x256:byte", "tiny-gpt:64x256:char",
         "tiny-llama:128x256:char", "tiny-gpt:64x256:bpe:2000", "tiny-gpt:8x256:wide:50257",
         "tiny-gpt:32x256:wide:50257", "tiny-llama:16x256:wide:50257",
         "gpt2-small:2x256:wide:50257")

def measure(case: str, steps: int) -> dict:
    preset, shape, tokenizer = case.split(":", 2)
    batch, length = shape.split("x")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-m", "tfstudio.train.calibrate", preset, batch, length,
                           tokenizer, "--steps", str(steps)],
                          env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{case}: {done.stderr.strip().splitlines()[-1:]}")
    row = json.loads(done.stdout.strip().splitlines()[-1])
    row["case"] = case
    return row


def table(rows: list[dict], steps: int) -> str:
    mb = 1e6
    lines = [f"Command: `nice python bench/bench_preflight_accuracy.py --steps {steps} --write` "
             f"on {platform.machine()} with {os.cpu_count()} CPU cores, Python "
             f"{platform.python_version()}, fp32, one torch thread, corpus sample:small; the "
             "run's tokenizer and the vocabulary (the LM head's rows) it gives are in the "
             "first columns (wide:50257: byte ids under GPT-2's 50,257-row head, whose files "
             "are not on this machine). Resident: RSS when the pre-flight would run (a run's "
             "imports made, train/preload.py; nothing built); the step's need: weights, "
             "gradients, AdamW state, activations with the logits' gradients and a fifth for "
             "the allocator; estimate = "
             f"resident + {CPU_RUNTIME // 10**6} MB of torch working memory + the need; peak: "
             "the process's high-water RSS (`VmHWM`) after "
             "the steps. Held within 1.5x by tests/runs/test_preflight.py.", "",
             "| run | vocabulary | resident (MB) | need (MB) | estimate (MB) | peak RSS (MB) "
             "| estimate / peak |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['vocab']:,} | {r['resident'] / mb:,.0f} | "
                     f"{r['need'] / mb:,.0f} | "
                     f"{r['estimate'] / mb:,.0f} | {r['peak'] / mb:,.0f} | "
                     f"{r['estimate'] / r['peak']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES),
                        help="comma-separated PRESET:BATCHxLENGTH")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="replace the section in "
                                                             "docs/BENCHMARKS.md")
    args = parser.parse_args()
    rows = []
    for case in args.cases.split(","):
        rows.append(measure(case, args.steps))
        print(json.dumps(rows[-1]), flush=True)
    text = table(rows, args.steps)
    print(text)
    if args.write:
        replace_section(TITLE, text)


if __name__ == "__main__":
    main()
