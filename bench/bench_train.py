"""Benchmark: the trainer's speed against a hand-written loop, and time to learn the reverse task.

1. tokens/s of ``Trainer`` (what ``tfstudio train`` runs, logging every step) on tiny-gpt against a
   hand-written loop over the same compiled model, batches, AdamW, schedule and clipping, in the
   same process, alternating which runs first; median of the repetitions. Target: >= 0.95.
2. seconds from constructing the trainer (graph compile, data, model) to >= 99% answer accuracy on
   ``task:reverse`` (evaluated every 10 steps). Target: <= 10 s on 2 CPU cores.
3. the copy each step takes of its data position and random state (a stop part-way through a
   step puts them back), against the trainer's step.

    python bench/bench_train.py [--reps 3] [--steps 60] [--threads N] [--no-write]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import torch
import torch.nn.functional as F

import tfstudio
from report import DOC, replace_section, step_clock  # noqa: E402  (bench/ is on sys.path)
from tfstudio.runs.config import TrainConfig
from tfstudio.train.optim import lr_at, make_optimizer
from tfstudio.train.pipeline import build_pipeline, fit_graph_to_tokenizer
from tfstudio.train.trainer import Trainer

SECTION = "## Training: trainer vs hand-written loop, time to learn reverse"
CFG = dict(corpus="sample:small", tokenizer="byte", batch_size=16, seq_len=64, lr=3e-3,
           warmup_steps=10, eval_every=0, log_every=1)


def trainer_tokens_per_s(steps: int) -> float:
    """Timed from the Started event (setup done) to the last step's metrics, by
    :func:`report.step_clock` (as the hand-written loop)."""
    times, now = {}, step_clock()[0]

    def clock(event):
        if event.kind in ("Started", "StepMetrics"):
            times[event.kind] = now()

    Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(steps=steps, **CFG),
            listeners=[clock]).run()
    return steps * CFG["batch_size"] * CFG["seq_len"] / (times["StepMetrics"] - times["Started"])


def hand_tokens_per_s(steps: int) -> float:
    cfg = TrainConfig(steps=steps, **CFG)
    torch.manual_seed(cfg.seed)
    pipe = build_pipeline(tfstudio.load_graph("tiny-gpt"), cfg)
    model = tfstudio.compile_graph(fit_graph_to_tokenizer(tfstudio.load_graph("tiny-gpt"),
                                                          pipe.tokenizer))
    opt = make_optimizer(model, cfg.lr, cfg.weight_decay, (cfg.beta1, cfg.beta2), "cpu")
    now = step_clock()[0]
    start = now()
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, lr=cfg.lr, warmup=cfg.warmup_steps, total=steps,
                                min_ratio=cfg.min_lr_ratio)
        batch = pipe.train_batch(cfg.batch_size)
        logits = model(*batch.inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), batch.labels.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        float(loss)
    return steps * cfg.batch_size * cfg.seq_len / (now() - start)


def position_copy_us(calls: int = 20000) -> float:
    """Microseconds of the copy each step takes of its data position and random state, so
    that a stop part-way through the step can put them back (Trainer._position)."""
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(steps=1, **CFG))
    trainer.run()
    start = time.perf_counter()
    for _ in range(calls):
        trainer._position()
    return (time.perf_counter() - start) / calls * 1e6


def seconds_to_reverse() -> tuple[float, int]:
    start = time.perf_counter()
    reached = {}
    cfg = TrainConfig(corpus="task:reverse", tokenizer="byte", steps=600, batch_size=32,
                      lr=3e-3, warmup_steps=20, eval_every=10, eval_batches=4, log_every=10)
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), cfg)

    def watch(event):
        if event.kind == "EvalMetrics" and event.accuracy >= 0.99 and not reached:
            reached.update(t=time.perf_counter() - start, step=event.step)
            trainer.stop()

    trainer.listeners.append(watch)
    trainer.run()
    return reached.get("t", float("inf")), reached.get("step", -1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    trainer_tps, hand_tps = [], []
    for rep in range(args.reps):
        order = [(trainer_tps, trainer_tokens_per_s), (hand_tps, hand_tokens_per_s)]
        for out, fn in order if rep % 2 == 0 else order[::-1]:
            out.append(fn(args.steps))
    t_tps, h_tps = statistics.median(trainer_tps), statistics.median(hand_tps)
    copy_us = statistics.median(position_copy_us() for _ in range(args.reps))
    step_us = CFG["batch_size"] * CFG["seq_len"] / t_tps * 1e6
    reverse = [seconds_to_reverse() for _ in range(args.reps)]
    secs = statistics.median(r[0] for r in reverse)
    lines = [
        f"`bench/bench_train.py --reps {args.reps} --steps {args.steps}"
        f"{f' --threads {args.threads}' if args.threads else ''}`: torch "
        f"{torch.__version__}, {torch.get_num_threads()} CPU thread(s), {os.cpu_count()} cores, "
        f"{platform.machine()}, load average {os.getloadavg()[0]:.1f} at the end. Medians of "
        f"{args.reps} repetitions in one process, alternating which loop runs first; tokens/s "
        f"timed by {step_clock()[1]}.", "",
        "| measure | tfstudio | reference | ratio | target |", "|---|---:|---:|---:|---:|",
        f"| tiny-gpt training tokens/s (batch 16 x 64, logging every step) | {t_tps:,.0f} | "
        f"{h_tps:,.0f} (hand-written loop) | {t_tps / h_tps:.3f} | >= 0.95 |",
        f"| seconds from start to 99% answer accuracy on task:reverse (tiny-gpt, batch 32) | "
        f"{secs:.1f} s (step {statistics.median(r[1] for r in reverse):.0f}) | | | <= 10 s |",
        f"| each step's copy of its data position and random state (to put back when a stop "
        f"gives the step up) | {copy_us:.1f} us | {step_us / 1e3:.1f} ms (the trainer's step) | "
        f"{copy_us / step_us:.5f} | |", ""]
    print("\n".join(lines))
    if not args.no_write:
        replace_section(SECTION, "\n".join(lines))
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
