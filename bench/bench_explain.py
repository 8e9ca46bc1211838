"""Benchmark: Explain's walk of tiny-gpt on a 17-token text (target: < 200 ms).

Times, each as the median of ``--reps`` runs after one warm-up: the model's plain forward (for
scale), ``forward_walk`` (one forward with every hook point recorded, turned into steps), the
walk plus its stage summaries (what the Walk tab draws), and everything the Explain view
computes on Enter (walk, logit lens, embedding map: ``compute_explanation``). Writes the Explain
section of docs/BENCHMARKS.md unless ``--no-write``.

    python bench/bench_explain.py [--reps 30] [--threads N] [--no-write]
"""
from __future__ import annotations

import argparse
import platform
import statistics
import time

import torch

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.presets import load_preset
from tfstudio.probes import forward_walk, probe_inputs
from tfstudio.train.pipeline import fit_graph_to_tokenizer

from report import replace_section  # noqa: E402  (bench/ is on sys.path)

SECTION = "## Explain: the walk of tiny-gpt"
TEXT = "abcdefgh>hgfedcba"   # 17 tokens with the byte tokenizer
TARGET_MS = 200.0


def median_ms(fn, reps: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's own)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    from tfstudio.gui.training.explain_view import compute_explanation

    tokenizer = build_tokenizer("byte")
    torch.manual_seed(0)
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-gpt"), tokenizer)).eval()
    inputs = probe_inputs(model, tokenizer, TEXT)
    assert len(inputs.ids["tokens"]) == 17

    def forward():
        with torch.no_grad():
            model(*inputs.args)

    steps = len(forward_walk(model, inputs).steps)
    rows = [("plain forward (no hook attached)", median_ms(forward, args.reps)),
            (f"forward_walk (every hook point recorded, {steps} steps)",
             median_ms(lambda: forward_walk(model, inputs), args.reps)),
            ("walk + stage summaries (the Walk tab's data)",
             median_ms(lambda: forward_walk(model, inputs).summaries(), args.reps)),
            ("compute_explanation (walk, logit lens, embedding map)",
             median_ms(lambda: compute_explanation(model, tokenizer, TEXT, -1, 0, None,
                                                   (1.0, 0, 1.0), []), args.reps))]
    table = ["| measure | median ms |", "| --- | --- |"]
    table += [f"| {name} | {ms:.1f} |" for name, ms in rows]
    walk_ms = rows[1][1]
    verdict = (f"The walk takes {walk_ms:.1f} ms: "
               + ("within" if walk_ms < TARGET_MS else "over")
               + f" the {TARGET_MS:.0f} ms target.")
    body = "\n".join([
        f"`python bench/bench_explain.py --reps {args.reps}"
        + (f" --threads {args.threads}" if args.threads else "") + "`: tiny-gpt (fresh "
        f"weights, byte tokens) on the 17-token text {TEXT!r}, median of {args.reps} runs "
        f"after a warm-up. Machine: {platform.machine()}, Python "
        f"{platform.python_version()}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} torch threads.", "", *table, "", verdict])
    print(body)
    if not args.no_write:
        print(f"written to {replace_section(SECTION, body)}")


if __name__ == "__main__":
    main()
