"""RoPE position interpolation with its control: a RoPE model trained at 64 tokens, then
fine-tuned at 256 three ways (RoPE as trained, linear x4, NTK x4), each also evaluated before
its fine-tune. The seed says linear scaling extends the context; the control (the same
fine-tune with no scaling) says how much of the recovery is the fine-tune's. Each training
runs at its own lr from the recorded sweep (``python bench/sweep_lr.py interpolation``): the
short model at the positions lesson's RoPE choice (the same model and training), each
fine-tune at the lr its own sweep chose at 256 tokens."""
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
from . import lr_record, register
from .lesson import FAILS, HOLDS, Check, Lesson, Paper, Sample, both, holm, lower
from .lr_record import Swept
from .training import LESSON_TRAINING

CLAIM = ("RoPE linear scaling (position interpolation): angle = (pos/s) * w_k, s = L_test / "
         "L_train, lets a model trained on L_train tokens read L_test.")
FACTOR, SHORT, LONG = 4, 64, 256
LENGTHS = [64, 128, 192, 256, 512]
WARMUP = lengths.warmup_positions(SHORT)   # the same warm-up for every evaluation
TUNE_STEPS, TUNE_BATCH = 100, 4            # 4 x 256 tokens a step, as 16 x 64 in training
WAYS = ("none", "linear", "ntk")           # no scaling (the control), linear, NTK
SHORT_RUN = "short"                        # its runs' folder and its name in the lr record
# each training's lr grid for its sweep (bench/sweep_lr.py interpolation): the short model's
# is the comparison lessons' (the positions lesson's RoPE variant is this very model and
# training, so its recorded sweep is kept: lr_record.recorded_twin); a fine-tune starts from
# a trained model, so its grid starts at the lessons' shared lr and goes down (the sweep
# widens it upwards where its top wins)
SHORT_GRID = (3e-3, 1e-2, 3e-2, 1e-1)
TUNE_GRID = (1e-4, 3e-4, 1e-3, 3e-3)


@dataclass
class Interpolation:
    """Loss per bucket, per way and seed, before and after the fine-tune at LONG tokens."""
    seeds: list[int]
    before: dict[str, list[lengths.LengthEval]] = field(default_factory=dict)
    after: dict[str, list[lengths.LengthEval]] = field(default_factory=dict)
    baselines: dict[str, float] = field(default_factory=dict)
    steps: int = LESSON_TRAINING["steps"]     # of the short training
    tune_steps: int = TUNE_STEPS              # of each fine-tune
    lrs: dict[str, float] = field(default_factory=dict)     # training -> its recorded lr
    same_as: dict[str, str] = field(default_factory=dict)   # training -> the sweep it kept
    shared_lr: float = LESSON_TRAINING["lr"]  # of the trainings with no recorded sweep

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

    def lr_text(self) -> str:
        """Each training's lr and where it came from: the recorded sweep (the fine-tunes
        chosen at LONG tokens) or, for a training with none, the lessons' shared lr."""
        names = [SHORT_RUN, *map(tune_name, WAYS)]
        if not self.lrs:
            return f"lr {self.shared_lr:g} (no lr sweep recorded: python bench/sweep_lr.py " \
                   "interpolation)"
        def own(name: str) -> str:
            kept = f", as swept for {self.same_as[name]}: the same model and training" \
                if name in self.same_as else ""
            return f"{name} {self.lrs[name]:g}{kept}"
        parts = [own(SHORT_RUN)] if SHORT_RUN in self.lrs else []
        tunes = [own(n) for n in names[1:] if n in self.lrs]
        if tunes:
            parts.append(f"fine-tunes at {LONG} tokens from the short model: " +
                         ", ".join(tunes))
        text = ("each training at its own best lr from its recorded lr sweep, chosen on the "
                "selection split (" + "; ".join(parts) + ")")
        shared = [n for n in names if n not in self.lrs]
        if shared:
            text += f"; not swept, at lr {self.shared_lr:g}: {', '.join(shared)}"
        return text


def fine_tune_steps(steps: int | None) -> int:
    """The fine-tune's length: TUNE_STEPS, a quarter of the lesson's training, and still a
    quarter when --steps changes the training (a 2-step try-out fine-tunes 1 step, not 100)."""
    if steps is None:
        return TUNE_STEPS
    return max(1, steps * TUNE_STEPS // LESSON_TRAINING["steps"])


def _tune_warmup(tune_steps: int) -> int:
    return max(1, tune_steps // 10)   # 10 of its 100 steps


def tune_name(way: str) -> str:
    return f"tune-{way}"


def trainings(steps: int | None = None) -> list[Swept]:
    """What the lesson trains, its seed and lr aside: the short RoPE model, then a fine-tune
    at LONG tokens per way starting from it; each is swept for its lr on its own grid."""
    from ... import load_graph

    base = apply_setting(load_graph("tiny-gpt"), "positions", "rope")
    short = dataclasses.replace(LESSON.config(None, steps), eval_every=100)
    tune_len = fine_tune_steps(steps)
    tune = TrainConfig.from_dict({**short.to_dict(), "seq_len": LONG, "batch_size": TUNE_BATCH,
                                  "steps": tune_len, "eval_every": tune_len,
                                  "warmup_steps": _tune_warmup(tune_len)})
    return [Swept(SHORT_RUN, base, short, SHORT_GRID),
            *(Swept(tune_name(way), base if way == "none" else
                    apply_rope_scaling(base, FACTOR, way), tune, TUNE_GRID, start=SHORT_RUN)
              for way in WAYS)]


def recorded_lrs() -> tuple[dict[str, float], dict[str, str]]:
    """({training: its lr from the recorded sweep}, {training: the sweep it kept, where it is
    another lesson's}); a training missing from the record trains at the shared lr."""
    found = lr_record.entry(LESSON.name) or {"variants": {}}
    names = [t.name for t in trainings()]
    swept = {n: v for n, v in found["variants"].items() if n in names}
    return ({n: v["lr"] for n, v in swept.items()},
            {n: v["same_as"] for n, v in swept.items() if "same_as" in v})


def _train(graph, config: TrainConfig, run_dir: Path, say) -> None:
    from ...train.trainer import Trainer
    from ...runs import RunFolder
    folder = RunFolder(run_dir)
    if folder.exists() and folder.config().lr != config.lr:
        raise ValueError(f"{run_dir} holds a run trained at lr {folder.config().lr:g} (now "
                         f"{config.lr:g}); use another --out, or delete it to start over")
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
    plan = {t.name: t for t in trainings(steps)}
    lrs, same_as = recorded_lrs()
    result = Interpolation(list(seeds), steps=steps or LESSON_TRAINING["steps"],
                           tune_steps=fine_tune_steps(steps), lrs=lrs, same_as=same_as)
    lr = lambda name: lrs.get(name, result.shared_lr)  # noqa: E731
    for seed in seeds:
        short = out / "runs" / SHORT_RUN / f"seed-{seed}"
        config = dataclasses.replace(plan[SHORT_RUN].config, seed=seed, lr=lr(SHORT_RUN))
        say(f"seed {seed}: RoPE trained at {SHORT} tokens, lr {config.lr:g}")
        _train(plan[SHORT_RUN].graph, config, short, say)
        for way in WAYS:
            factor = 1.0 if way == "none" else float(FACTOR)
            kind = "linear" if way == "none" else way
            result.before.setdefault(way, []).append(_evaluate(short, factor, kind))
            tuned = out / "runs" / tune_name(way) / f"seed-{seed}"
            graph = load_graph_file(short / "graph.json")
            if way != "none":
                graph = apply_rope_scaling(graph, FACTOR, way)
            tune = dataclasses.replace(plan[tune_name(way)].config, seed=seed,
                                       lr=lr(tune_name(way)), init_from=str(short))
            say(f"seed {seed}: fine-tune at {LONG} tokens, scaling {way}, lr {tune.lr:g}")
            _train(graph, tune, tuned, say)
            result.after.setdefault(way, []).append(_evaluate(tuned))
        if not result.baselines:
            splits = run_splits(_folder(short))
            result.baselines = ngram_cross_entropies(splits.train, splits.val, splits.vocab_size)
    _write_page(out, result)
    return result


def schedule(seeds: int, steps: int | None) -> list:
    """What ``run`` trains, one run at a time, each at the lr it trains at: the short RoPE
    model per seed, then its three fine-tunes at LONG tokens (each step timed as "tune":
    from scratch or not, a step costs the same)."""
    from .cost import Training

    lrs, _ = recorded_lrs()
    return [Training(t.name if not t.start else "tune", lambda g=t.graph: g,
                     dataclasses.replace(t.config, lr=lrs.get(t.name, t.config.lr)), seeds,
                     parallel=False) for t in trainings(steps)]


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
    judge, eval_lengths=LENGTHS, run=run, schedule=schedule, sweeps=trainings,
    papers=(PAPER,)))
