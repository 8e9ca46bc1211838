"""RoPE position interpolation with its control: a RoPE model trained at 64 tokens, then
fine-tuned at 256 three ways (RoPE as trained, linear x4, NTK x4), each also evaluated before
its fine-tune. The seed says linear scaling extends the context; the control (the same
fine-tune with no scaling) says how much of the recovery is the fine-tune's."""
from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from ...graph import load_graph_file
from ...runs import TrainConfig
from ...runs.disk import write_whole
from .. import lengths
from ..baselines import ngram_cross_entropies
from ..runner import is_finished
from ..scaling import apply_rope_scaling
from ..splits import run_splits
from ..variants import apply_setting
from . import register
from .lesson import FAILS, HOLDS, Check, Lesson, Paper, Sample, both, holm, lower
from .training import LESSON_TRAINING

CLAIM = ("RoPE linear scaling (position interpolation): angle = (pos/s) * w_k, s = L_test / "
         "L_train, lets a model trained on L_train tokens read L_test.")
FACTOR, SHORT, LONG = 4, 64, 256
LENGTHS = [64, 128, 192, 256, 512]
WARMUP = lengths.warmup_positions(SHORT)   # the same warm-up for every evaluation
TUNE_STEPS, TUNE_BATCH = 100, 4            # 4 x 256 tokens a step, as 16 x 64 in training
WAYS = ("none", "linear", "ntk")           # no scaling (the control), linear, NTK


@dataclass
class Interpolation:
    """Loss per bucket, per way and seed, before and after the fine-tune at LONG tokens."""
    seeds: list[int]
    before: dict[str, list[lengths.LengthEval]] = field(default_factory=dict)
    after: dict[str, list[lengths.LengthEval]] = field(default_factory=dict)
    baselines: dict[str, float] = field(default_factory=dict)
    steps: int = LESSON_TRAINING["steps"]     # of the short training
    tune_steps: int = TUNE_STEPS              # of each fine-tune

    def bucket(self, stage: str, way: str, i: int) -> Sample:
        return Sample.of([e.buckets[i] for e in getattr(self, stage)[way]])

    def names(self) -> list[str]:
        return next(iter(self.before.values()))[0].bucket_names()

    def scale(self) -> str:
        """The budget beside the paper's: tokens trained short, then fine-tuned long."""
        short = self.steps * LESSON_TRAINING["batch_size"] * SHORT
        return (f"tiny-gpt with RoPE, {short:,} training tokens at {SHORT} then "
                f"{self.tune_steps * TUNE_BATCH * LONG:,} fine-tuning tokens at {LONG} "
                f"(on the {LESSON_TRAINING['corpus']} corpus)")


def fine_tune_steps(steps: int | None) -> int:
    """The fine-tune's length: TUNE_STEPS, a quarter of the lesson's training, and still a
    quarter when --steps changes the training (a 2-step try-out fine-tunes 1 step, not 100)."""
    if steps is None:
        return TUNE_STEPS
    return max(1, steps * TUNE_STEPS // LESSON_TRAINING["steps"])


def _tune_warmup(tune_steps: int) -> int:
    return max(1, tune_steps // 10)   # 10 of its 100 steps


def _train(graph, config: TrainConfig, run_dir: Path, say) -> None:
    from ...train.trainer import Trainer
    if is_finished(run_dir, config.steps):
        return
    end = Trainer(graph, config, run_dir=run_dir, overwrite=True).run()
    if end.kind == "Failed":
        raise ValueError(f"training {run_dir} failed: {end.message}")
    say(f"      trained {run_dir} in {end.elapsed_s:.0f}s")


def _evaluate(run_dir: Path, factor: float = 1.0, kind: str = "linear") -> lengths.LengthEval:
    path = lengths.result_path(run_dir, factor, kind)
    if path.exists():
        stored = lengths.load(path)
        if stored.lengths == LENGTHS and stored.warmup == WARMUP:
            return stored
    result = lengths.evaluate_run(run_dir, LENGTHS, rope_scaling=factor, rope_scaling_type=kind,
                                  warmup=WARMUP)
    lengths.save(result, path)
    return result


def run(out: Path, seeds: list[int], steps: int | None, say) -> Interpolation:
    from ... import load_graph
    tune_len = fine_tune_steps(steps)
    result = Interpolation(list(seeds), steps=steps or LESSON_TRAINING["steps"],
                           tune_steps=tune_len)
    base = apply_setting(load_graph("tiny-gpt"), "positions", "rope")
    for seed in seeds:
        short = out / "runs" / "short" / f"seed-{seed}"
        config = dataclasses.replace(LESSON.config(seed, steps), eval_every=100)
        say(f"seed {seed}: RoPE trained at {SHORT} tokens")
        _train(base, config, short, say)
        for way in WAYS:
            factor = 1.0 if way == "none" else float(FACTOR)
            kind = "linear" if way == "none" else way
            result.before.setdefault(way, []).append(_evaluate(short, factor, kind))
            tuned = out / "runs" / f"tune-{way}" / f"seed-{seed}"
            graph = load_graph_file(short / "graph.json")
            if way != "none":
                graph = apply_rope_scaling(graph, FACTOR, way)
            tune = TrainConfig.from_dict({**config.to_dict(), "seq_len": LONG,
                                          "batch_size": TUNE_BATCH, "steps": tune_len,
                                          "eval_every": tune_len, "init_from": str(short),
                                          "warmup_steps": _tune_warmup(tune_len)})
            say(f"seed {seed}: fine-tune at {LONG} tokens, scaling {way}")
            _train(graph, tune, tuned, say)
            result.after.setdefault(way, []).append(_evaluate(tuned))
        if not result.baselines:
            splits = run_splits(_folder(short))
            result.baselines = ngram_cross_entropies(splits.train, splits.val, splits.vocab_size)
    _write_page(out, result)
    return result


def schedule(seeds: int, steps: int | None) -> list:
    """What ``run`` trains, one run at a time: the short RoPE model per seed, then its three
    fine-tunes at LONG tokens (timed from scratch: a step costs the same either way)."""
    from ... import load_graph
    from .cost import Training

    base = apply_setting(load_graph("tiny-gpt"), "positions", "rope")
    short = TrainConfig(**{**LESSON_TRAINING, **({"steps": steps} if steps else {})})
    tune_len = fine_tune_steps(steps)
    tune = TrainConfig(**{**LESSON_TRAINING, "seq_len": LONG, "batch_size": TUNE_BATCH,
                          "steps": tune_len, "warmup_steps": _tune_warmup(tune_len)})
    return [Training("short", lambda: base, short, seeds, parallel=False),
            Training("tune", lambda: apply_rope_scaling(base, FACTOR, "linear"), tune,
                     seeds * len(WAYS), parallel=False)]


def _folder(path: Path):
    from ...runs import RunFolder
    return RunFolder(path)


def judge(r: Interpolation) -> list[Check]:
    """Each way judged on its own range, up to L_test = FACTOR x SHORT = LONG: one test per
    bucket past SHORT, Holm-corrected for their number; buckets past LONG are reported as also
    measured, never judged."""
    names = r.names()
    unigram = r.baselines["unigram"]
    inside = 0
    judged = [i for i, end in enumerate(LENGTHS) if SHORT < end <= LONG]
    beyond = [i for i, end in enumerate(LENGTHS) if end > LONG]
    checks = []
    lin = lambda i: r.bucket("before", "linear", i)  # noqa: E731
    none = lambda i: r.bucket("before", "none", i)  # noqa: E731
    learns = lower(lin(inside), unigram).named(f"{names[inside]} against the unigram counter")
    # each seed's short model is read (and fine-tuned) every way: the ways pair by seed
    reads = holm([lower(lin(i), none(i), paired=True).named(f"{names[i]} against unscaled")
                  for i in judged])
    checks.append(Check(
        f"Linear x{FACTOR} reads longer contexts without retraining (up to {LONG})",
        both(learns, *reads),
        f"Before any fine-tune, linear x{FACTOR}: " + _row(lin, names, [inside, *judged]) +
        "; unscaled: " + _row(none, names, [inside, *judged]) +
        f"; counting single characters gives {unigram:.3f}" + (f" (linear x{FACTOR} is worse than that even at {names[inside]})"
                            if learns.outcome == FAILS else "") + "." +
        _also(names, beyond, ("linear", lin), ("unscaled", none)), tests=(learns, *reads)))
    control = lambda i: r.bucket("after", "none", i)  # noqa: E731
    for way, title in (("linear", "Linear"), ("ntk", "NTK")):
        tuned = lambda i, way=way: r.bucket("after", way, i)  # noqa: E731
        tests = holm([lower(tuned(i), control(i), paired=True).named(
            f"{names[i]} against the control") for i in judged])
        wins = sum(t.outcome == HOLDS for t in tests)
        best = [_best(r, i) for i in range(len(names))]
        checks.append(Check(
            f"{title} x{FACTOR} then a {r.tune_steps}-step fine-tune at {LONG} beats the same "
            f"fine-tune without scaling (the control), up to {LONG}", both(*tests),
            f"After the fine-tune, {way}: " + _row(tuned, names, judged) + "; control: " +
            _row(control, names, judged) + f"; lower in {wins} of {len(judged)} buckets by the "
            "test. Best per bucket: " +
            ", ".join(f"{names[i]} {best[i]}" for i in range(len(names))) + "." +
            _also(names, beyond, (way, tuned), ("control", control)), tests=tuple(tests)))
    return checks


def _row(sample_at, names, which=None) -> str:
    which = range(len(names)) if which is None else which
    return ", ".join(f"{sample_at(i).text()} at {names[i]}" for i in which)


def _also(names, beyond, *rows) -> str:
    """The buckets past L_test, as measured and not judged."""
    if not beyond:
        return ""
    return (f" Also measured past L_test = {LONG} (not judged): " +
            "; ".join(f"{label} {_row(at, names, beyond)}" for label, at in rows) + ".")


def _best(r: Interpolation, i: int) -> str:
    """The way with the lowest mean after the fine-tune, or a tie where the test does not
    separate it from another."""
    samples = {w: r.bucket("after", w, i) for w in WAYS}
    first = min(samples, key=lambda w: samples[w].mean)
    tied = [w for w in WAYS if w != first and
            lower(samples[first], samples[w], paired=True).outcome != HOLDS]
    label = {"none": "no scaling", "linear": "linear", "ntk": "NTK"}
    return label[first] + (f" (tied with {', '.join(label[w] for w in tied)})" if tied else "")


def table(r: Interpolation) -> tuple[list[str], list[list[str]]]:
    names = r.names()
    header = ["RoPE scaling", "fine-tune", f"warm-up 0-{WARMUP - 1} (apart)"] + \
        [f"loss at {n}" for n in names]
    rows = []
    for stage, words in (("before", "none"), ("after", f"{_steps(r.tune_steps)} at {LONG}")):
        for way in WAYS:
            evals = getattr(r, stage)[way]
            warm = statistics.fmean(e.warmup_loss for e in evals)
            rows.append([{"none": "none (control)", "linear": f"linear x{FACTOR}",
                          "ntk": f"NTK x{FACTOR}"}[way], words, f"{warm:.3f}"] +
                        [r.bucket(stage, way, i).text() for i in range(len(names))])
    return header, rows


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def _write_page(out: Path, r: Interpolation) -> None:
    from ..report import _html_table, _md_table
    lesson = LESSON
    lines = lesson.summarise(r)
    header, rows = table(r)
    settings = (f"RoPE tiny-gpt trained on {SHORT} tokens ({_steps(r.steps)} of "
                f"{LESSON_TRAINING['batch_size']} x {SHORT}), then fine-tuned "
                f"{_steps(r.tune_steps)} of {TUNE_BATCH} x {LONG}; seeds "
                f"{', '.join(map(str, r.seeds))}; loss is mean ± sample standard deviation over "
                "seeds.")
    md = "\n".join([f"# {lesson.title}", "", *lines, "", settings, "", _md_table(header, rows)])
    write_whole(out / "report.md", md + "\n")
    import html
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(lesson.title)}"
            f"</title></head><body><h1>{html.escape(lesson.title)}</h1>" +
            "".join(f"<p>{html.escape(x)}</p>" for x in lines) +
            f"<p>{html.escape(settings)}</p>{_html_table(header, rows)}</body></html>")
    write_whole(out / "report.html", page)


PAPER = Paper(
    "Chen et al. 2023, Extending Context Window of Large Language Models via Positional "
    "Interpolation",
    "linearly down-scaling RoPE's positions extended LLaMA's 2,048-token window up to 32,768 "
    "with fine-tuning within 1,000 steps, rather than extrapolating past the trained positions "
    "(which can give catastrophically high attention scores)",
    "LLaMA 7B to 65B")


LESSON = register(Lesson(
    "interpolation", "Lesson: RoPE position interpolation, with its control", CLAIM,
    "project seed, section 3, Positional encodings: RoPE", "tiny-gpt", [], LESSON_TRAINING,
    judge, eval_lengths=LENGTHS, run=run, schedule=schedule, papers=(PAPER,)))
