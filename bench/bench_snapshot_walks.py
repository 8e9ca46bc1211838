"""Benchmark: what the walk adds to each look inside during a long run, with and without the cap.

Trains tiny-gpt on task:reverse for ``--steps`` steps looking inside every ``--probe-every``
steps (the app's default is 10), the run taking the walk every WALK_KEPT_EVERY-th look and
writing its own files, while a listener takes the walk of every other look too (timed, on the
model of that step) and writes every look whole into a second folder (what runs did before the
cap). Reports the probes folder's size both ways, the bytes of one look with and without its
walk, and the median time of a walk over the run against one look without it (median of
``--reps`` on the trained model). Writes its section of docs/BENCHMARKS.md unless
``--no-write``.

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
from tfstudio.probes.inputs import DEFAULT_MAX_TOKENS
from tfstudio.probes.snapshot import WALK_KEPT_EVERY, _separator, walk_summary
from tfstudio.runs import TrainConfig
from tfstudio.train.trainer import Trainer

from bench_explain import median_ms  # noqa: E402  (bench/ is on sys.path)
from report import replace_section  # noqa: E402

SECTION = "## Explain: the walk in each look inside, capped"


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.glob("step-*.npz"))


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
        walk_times: list[float] = []

        def uncapped(event) -> None:
            """Every look whole, its walk taken here where the run took none (timed)."""
            if type(event).__name__ != "Probe":
                return
            data = dict(event.data)
            if "walk" not in data:
                inputs = probe_inputs(trainer.model, trainer.tokenizer, data["text"],
                                      min(cfg.seq_len, DEFAULT_MAX_TOKENS),
                                      _separator(trainer))
                start = time.perf_counter()
                data["walk"] = walk_summary(trainer.model, inputs, trainer.tokenizer)
                walk_times.append((time.perf_counter() - start) * 1000)
            whole.save(data)

        trainer.listeners.append(uncapped)
        start = time.perf_counter()
        assert trainer.run().kind == "Finished"
        run_s = time.perf_counter() - start
        capped = SnapshotStore(trainer.run_folder.path)
        looks = len(capped.steps())
        kept = sum(1 for s in capped.steps() if "walk" in capped.load(s))
        capped_b, whole_b = folder_bytes(capped.directory), folder_bytes(whole.directory)
        model, tokenizer = trainer.model, trainer.tokenizer
        text = cfg.probe_text or trainer._default_probe_text
        inputs = probe_inputs(model, tokenizer, text, min(cfg.seq_len, DEFAULT_MAX_TOKENS),
                              _separator(trainer))
        one = Path(tmp) / "one"
        size = {}
        for name, walk in (("with", True), ("without", False)):
            SnapshotStore(one / name).save(take_snapshot(
                model, tokenizer, text, max_tokens=min(cfg.seq_len, DEFAULT_MAX_TOKENS),
                separator=_separator(trainer), walk=walk))
            size[name] = folder_bytes(one / name / "probes")
        look_with_b, look_without_b = size["with"], size["without"]
        look_ms = median_ms(lambda: take_snapshot(
            model, tokenizer, text, max_tokens=min(cfg.seq_len, DEFAULT_MAX_TOKENS),
            separator=_separator(trainer), walk=False), args.reps)
        walk_ms = statistics.median(walk_times)
    tokens = len(inputs.ids[inputs.stream_role])
    per_20k = 20_000 // args.probe_every + 1
    walk_b = look_with_b - look_without_b
    rows = [
        ("one look's file, without its walk (the reference)", f"{look_without_b:,} B", "1.00"),
        ("one look's file, with its walk", f"{look_with_b:,} B",
         f"{look_with_b / look_without_b:.2f}"),
        (f"this run's {looks} looks, every walk kept (before the cap)", f"{whole_b:,} B",
         f"{whole_b / (looks * look_without_b):.2f}"),
        (f"this run's {looks} looks, the walk taken in {kept} (every {WALK_KEPT_EVERY}th)",
         f"{capped_b:,} B", f"{capped_b / (looks * look_without_b):.2f}"),
        ("one look without its walk (the reference; trained model)", f"{look_ms:.1f} ms",
         "1.00"),
        (f"a walk (`walk_summary`), median of the run's {len(walk_times)} uncapped looks",
         f"{walk_ms:.1f} ms", f"{walk_ms / look_ms:.2f}"),
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
        f"walks kept whole, {-(-per_20k // WALK_KEPT_EVERY) * walk_b / 1e6:.1f} MB with the cap, "
        f"and the walks' time falls by the same {WALK_KEPT_EVERY}x. While the run trains, "
        f"Explain shows the newest walk (at most {WALK_KEPT_EVERY * args.probe_every} steps "
        "old) and names its step."])
    print(body)
    if not args.no_write:
        print(f"written to {replace_section(SECTION, body)}")


if __name__ == "__main__":
    main()
