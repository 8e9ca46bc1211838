"""How close the memory pre-flight's training estimate is to what a CPU run really takes.

For each preset, batch and length: a fresh process builds the run (corpus, tokenizer, model),
notes its resident memory just before the first step (the baseline: interpreter, torch, data),
trains ``--steps`` steps, and reports its peak RSS (``ru_maxrss``). The pre-flight's estimate
(tfstudio.runs.preflight.training_need: weights, gradients, AdamW state, activations) is
compared with the peak less the baseline, the part of memory a training step adds. A ratio
above 1 is a pessimistic estimate (a run refused that would fit), below 1 an optimistic one.

    python bench/bench_preflight_accuracy.py [--cases tiny-gpt:64x256,...] [--steps 2] [--write]
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

TITLE = "## Memory pre-flight: estimate vs measured peak (CPU)"
ROOT = Path(__file__).resolve().parent.parent
CASES = ("tiny-gpt:64x256", "tiny-gpt:256x256", "tiny-gpt:1024x256", "tiny-llama:64x256",
         "tiny-llama:256x256", "gpt2-small:2x256", "gpt2-small:8x256")

CHILD = r"""
import json, resource, sys
import psutil, torch
from tfstudio.presets import load_preset
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.preflight import training_need
from tfstudio.train.pipeline import fit_graph_to_tokenizer
from tfstudio.train.trainer import Trainer
preset, batch, length, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
config = TrainConfig(corpus="sample:small", tokenizer="byte", steps=steps, batch_size=batch,
                     seq_len=length, warmup_steps=0, eval_every=0, device="cpu",
                     precision="fp32", no_memory_check=True)
seen = {}
def note(event):
    if event.kind == "Started":
        seen["base"] = psutil.Process().memory_info().rss
trainer = Trainer(load_preset(preset), config, listeners=[note])
end = trainer.run()
need = training_need(fit_graph_to_tokenizer(load_preset(preset), trainer.tokenizer),
                     batch=batch, seq_len=length, precision="fp32")
print(json.dumps({"end": end.kind, "base": seen.get("base"), "peak":
                  resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "fixed": need.fixed, "activations": need.activations, "total": need.total}))
"""


def measure(case: str, steps: int) -> dict:
    preset, shape = case.split(":")
    batch, length = shape.split("x")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", CHILD, preset, batch, length, str(steps)],
                          env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{case}: {done.stderr.strip().splitlines()[-1:]}")
    row = json.loads(done.stdout.strip().splitlines()[-1])
    row.update(case=case, added=row["peak"] - row["base"])
    return row


def table(rows: list[dict], steps: int) -> str:
    """The estimate against what the steps added: the weights are already in the baseline
    (the model is built when the run starts), so they are taken off the estimate there."""
    mb = 1e6
    lines = [f"Command: `python bench/bench_preflight_accuracy.py --steps {steps} --write` on "
             f"{platform.machine()} with {os.cpu_count()} CPU cores, Python "
             f"{platform.python_version()}, fp32, one torch thread, corpus sample:small, byte "
             "tokenizer. Baseline: RSS when the run starts (interpreter, torch, data, the built "
             "model's weights); peak: `ru_maxrss` after the steps; added = peak - baseline. "
             "The estimate is the pre-flight's (weights + gradients + AdamW state + "
             "activations); its activations column is the cost model's alone. "
             "estimate / added compares the estimate less the weights (already in the "
             "baseline) with what the steps added: below 1 the pre-flight is optimistic.", "",
             "| run | estimate (MB) | activations (MB) | baseline (MB) | peak (MB) | added (MB) "
             "| estimate / added | measured / estimated activations |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        weights = r["fixed"] // 4  # fixed = weights + gradients (4 B each) + AdamW (8 B)
        beyond = r["total"] - weights
        measured_acts = r["added"] - (r["fixed"] - weights)
        lines.append(f"| {r['case']} | {r['total'] / mb:,.0f} | {r['activations'] / mb:,.0f} | "
                     f"{r['base'] / mb:,.0f} | {r['peak'] / mb:,.0f} | {r['added'] / mb:,.0f} | "
                     f"{beyond / max(r['added'], 1):.2f} | "
                     f"{measured_acts / max(r['activations'], 1):.2f} |")
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
