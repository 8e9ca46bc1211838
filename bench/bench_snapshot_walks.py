"""Benchmark: what the walk adds to each look inside during a long run, with and without the cap.

Trains tiny-gpt on task:reverse for ``--steps`` steps looking inside every ``--probe-every``
steps (the app's default is 10), the run writing its own capped files (the walk kept every
WALK_KEPT_EVERY-th look) while a listener writes every look whole into a second folder (what the
files were before the cap). Reports the probes folder's size both ways, the bytes per look with
and without its walk, and the time one look takes with and without its walk (median of
``--reps`` after a warm-up, on the trained model), each as a ratio to the look without the walk
measured in the same run. Writes its section of docs/BENCHMARKS.md unless ``--no-write``.

    python bench/bench_snapshot_walks.py [--steps 1000] [--probe-every 10] [--reps 20]
"""
from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from pathlib import Path

import torch

import tfstudio
from tfstudio.probes import SnapshotStore, probe_inputs, take_snapshot
from tfstudio.probes.snapshot import WALK_KEPT_EVERY, walk_summary, without_walk
from tfstudio.runs import TrainConfig
from tfstudio.train.trainer import Trainer

from report import replace_section  # noqa: E402  (bench/ is on sys.path)

SECTION = "## Explain: the walk in each look inside, capped"


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.glob("step-*.npz"))


def median_ms(fn, reps: int) -> float:
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--probe-every", type=int, default=10)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        whole = SnapshotStore(Path(tmp) / "whole")
        cfg = TrainConfig(corpus="task:reverse", tokenizer="char", steps=args.steps,
                          batch_size=16, seq_len=64, eval_every=args.steps, log_every=50,
                          probe_every=args.probe_every, checkpoint_every=0)
        trainer = Trainer(tfstudio.load_graph("tiny-gpt"), cfg, run_dir=Path(tmp) / "run")
        trainer.listeners.append(lambda e: whole.save(e.data)
                                 if type(e).__name__ == "Probe" else None)
        start = time.perf_counter()
        assert trainer.run().kind == "Finished"
        run_s = time.perf_counter() - start
        capped = SnapshotStore(trainer.run_folder.path)
        looks = len(capped.steps())
        kept = sum(1 for s in capped.steps() if "walk" in capped.load(s))
        capped_b, whole_b = folder_bytes(capped.directory), folder_bytes(whole.directory)
        model, tokenizer = trainer.model, trainer.tokenizer
        text = cfg.probe_text or trainer._default_probe_text
        inputs = probe_inputs(model, tokenizer, text, min(cfg.seq_len, 64))
        data = take_snapshot(model, tokenizer, text, max_tokens=min(cfg.seq_len, 64))
        one = Path(tmp) / "one"
        SnapshotStore(one / "a").save(data)
        SnapshotStore(one / "b").save(without_walk(data))
        look_with_b = folder_bytes(one / "a" / "probes")
        look_without_b = folder_bytes(one / "b" / "probes")
        look_ms = median_ms(lambda: take_snapshot(model, tokenizer, text,
                                                  max_tokens=min(cfg.seq_len, 64)), args.reps)
        walk_ms = median_ms(lambda: walk_summary(model, inputs, tokenizer), args.reps)
    tokens = len(inputs.ids[inputs.stream_role])
    per_20k = 20_000 // args.probe_every + 1
    walk_b = look_with_b - look_without_b
    rows = [
        ("one look's file, without its walk (the reference)", f"{look_without_b:,} B", "1.00"),
        ("one look's file, with its walk", f"{look_with_b:,} B",
         f"{look_with_b / look_without_b:.2f}"),
        (f"this run's {looks} looks, every walk kept (before the cap)", f"{whole_b:,} B",
         f"{whole_b / (looks * look_without_b):.2f}"),
        (f"this run's {looks} looks, walk kept in {kept} (every {WALK_KEPT_EVERY}th)",
         f"{capped_b:,} B", f"{capped_b / (looks * look_without_b):.2f}"),
        ("one look without its walk (the reference)", f"{look_ms - walk_ms:.1f} ms", "1.00"),
        ("its walk (`walk_summary`)", f"{walk_ms:.1f} ms",
         f"{walk_ms / max(look_ms - walk_ms, 1e-9):.2f}"),
    ]
    table = ["| measure | value | ratio to the reference |", "| --- | --- | --- |"]
    table += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    body = "\n".join([
        f"`python bench/bench_snapshot_walks.py --steps {args.steps} --probe-every "
        f"{args.probe_every} --reps {args.reps} --threads {args.threads}`: tiny-gpt trained on "
        f"task:reverse (char tokens, batch 16, length 64) for {args.steps} steps in "
        f"{run_s:.0f} s, looking inside every {args.probe_every} steps on its "
        f"{tokens}-token probe text. Machine: {platform.machine()}, Python "
        f"{platform.python_version()}, torch {torch.__version__}, {args.threads} torch "
        "thread(s); the shared 2-core machine was busy, so the times are loose.", "", *table,
        "", f"A walk adds {walk_b:,} B to a look's file. A 20,000-step run looking every "
        f"{args.probe_every} steps takes {per_20k:,} looks: {per_20k * walk_b / 1e6:.1f} MB of "
        f"walks kept whole, {-(-per_20k // WALK_KEPT_EVERY) * walk_b / 1e6:.1f} MB with the cap. "
        "Every look's event still carries its walk, so Explain shows the newest while the "
        "run trains."])
    print(body)
    if not args.no_write:
        print(f"written to {replace_section(SECTION, body)}")


if __name__ == "__main__":
    main()
