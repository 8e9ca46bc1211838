"""Each variant's own best learning rate, from a recorded sweep.

Every variant trains at each lr of a log-spaced grid over the seeds, with the comparison's own
steps and batch, and is scored on the *selection* split. The chosen lr follows the
one-standard-error rule (Hastie, Tibshirani & Friedman, *Elements of Statistical Learning*
7.10): the smallest lr whose mean loss lies within one standard error of the lowest mean. A
larger lr that wins by less than its own seeds' noise sits nearer the divergence cliff, and at
a lesson's 3-5 seeds one seed in four landed far above the rest (GPT-2 at 0.03: 0.57, 0.71,
1.28), so the lower of two indistinguishable lrs is the safer choice. When the best
lr lies at an edge of the grid, the grid is widened on that side (to the next value of the
1, 3, 10 series: a half-decade at a time) and the new lrs trained, so a chosen lr is never an edge the grid did not look past.

Two seeds cannot show an lr where one run in four stalls (the attention lesson's GQA at 0.03
trained to 0.62 on both sweep seeds and stalled at 2.2 on a lesson seed). So the sweep then
*confirms*: the two lrs with the lowest means train again on two more seeds that no lesson
trains (CONFIRM_SEEDS), and the rule chooses among those two, now on four seeds each. That
caught MQA at 0.03 (0.619, 0.612, then 0.771 on seed 102) and moved it to 0.01; a stall rarer
than one in four can still pass four seeds (GQA's did), and the lesson page names such a run.

Splits: the sweep trains on the first ``1 - 2 * val_fraction`` of the tokens and chooses on
the next ``val_fraction``; the comparison reports on the last ``val_fraction`` (its validation
split), which the sweep never scores on. So the choice and the reported loss come from
separate text.

``tfstudio compare --tune-lr`` and ``bench/sweep_lr.py`` (the lessons' record) both call
``sweep``; a fine-tune's sweep (``sweep_fine_tunes``) trains the model it starts from once per
seed on the same training split, then calls it with each run starting from that model.
"""
from __future__ import annotations

import dataclasses
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..graph import Graph
from ..runs import TrainConfig

DEFAULT_GRID = (1e-3, 3e-3, 1e-2, 3e-2)
DEFAULT_SEEDS = (1, 2)
CONFIRM_SEEDS = (101, 102)   # the front-runners' extra seeds: apart from every lesson's 1-5
FRONT_RUNNERS = 2            # how many of the lowest means the confirming seeds train
STALL_SHARE = 0.2            # a sweep seed this far above the chosen lr's mean stalled there
MAX_WIDENINGS = 2            # per side: the grid stops growing after this many


@dataclass
class LrPoint:
    """One lr of one variant: the selection loss of each seed (inf where the run diverged)."""
    lr: float
    losses: list[float]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.losses) if self.losses else math.inf

    @property
    def spread(self) -> float | None:
        finite = [x for x in self.losses if math.isfinite(x)]
        return statistics.stdev(finite) if len(finite) > 1 and len(finite) == len(self.losses) \
            else None

    def text(self) -> str:
        if not math.isfinite(self.mean):
            return "diverged"
        return f"{self.mean:.3f}" + (f" ± {self.spread:.3f}" if self.spread is not None else "")

    def to_dict(self) -> dict:
        return {"lr": self.lr, "losses": [x if math.isfinite(x) else None for x in self.losses]}

    @classmethod
    def from_dict(cls, data: dict) -> "LrPoint":
        return cls(float(data["lr"]),
                   [math.inf if x is None else float(x) for x in data["losses"]])


@dataclass
class VariantSweep:
    """The sweep of one variant: every lr tried (ascending) and the one chosen."""
    name: str
    points: list[LrPoint] = field(default_factory=list)
    widened: dict[str, int] = field(default_factory=lambda: {"low": 0, "high": 0})

    @property
    def grid(self) -> list[float]:
        return [p.lr for p in self.points]

    @property
    def candidates(self) -> list[LrPoint]:
        """The lrs the choice is made among: those trained on the most seeds (the confirmed
        front-runners once the sweep has confirmed, every lr before)."""
        most = max(len(p.losses) for p in self.points)
        return [p for p in self.points if len(p.losses) == most]

    @property
    def confirmed(self) -> bool:
        return len({len(p.losses) for p in self.points}) > 1

    @property
    def best(self) -> LrPoint:
        return min(self.candidates, key=lambda p: p.mean)

    @property
    def chosen(self) -> LrPoint:
        """The smallest candidate lr whose mean is within one standard error of the best mean
        (the best itself when its seeds give no spread)."""
        best = self.best
        within = best.mean + (best.spread or 0.0) / math.sqrt(len(best.losses))
        return min((p for p in self.candidates if p.mean <= within), key=lambda p: p.lr)

    def unsteady_above(self) -> LrPoint | None:
        """The next candidate lr above the chosen one when some of its seeds ended below the
        chosen lr's mean and some stalled, STALL_SHARE or more above it (a faster lr that some
        seeds ride and others stall at), else None."""
        above = [p for p in self.candidates if p.lr > self.chosen.lr]
        if not above:
            return None
        faster, mean = min(above, key=lambda p: p.lr), self.chosen.mean
        if any(x < mean for x in faster.losses) and \
                any(x >= (1 + STALL_SHARE) * mean for x in faster.losses):
            return faster
        return None

    def front_runners(self) -> list[LrPoint]:
        """The FRONT_RUNNERS lrs with the lowest means (finite ones only): those the sweep
        confirms on more seeds."""
        finite = [p for p in self.points if math.isfinite(p.mean)]
        return sorted(finite, key=lambda p: p.mean)[:FRONT_RUNNERS]

    def point_at(self, lr: float) -> LrPoint:
        """The point of ``lr``, added (with no losses yet) if the sweep has none."""
        for p in self.points:
            if math.isclose(p.lr, lr, rel_tol=1e-9):
                return p
        self.points.append(LrPoint(lr, []))
        self.points.sort(key=lambda p: p.lr)
        return self.point_at(lr)

    @property
    def chosen_lr(self) -> float:
        return self.chosen.lr

    def at_edge(self) -> str:
        """"low" or "high" when the best lr (the lowest mean, which the chosen lr is measured
        from) is the grid's smallest or largest, else ""."""
        if self.best is self.points[0]:
            return "low"
        return "high" if self.best is self.points[-1] else ""

    def to_dict(self) -> dict:
        return {"name": self.name, "lr": self.chosen_lr, "at_edge": self.at_edge(),
                "widened": dict(self.widened), "points": [p.to_dict() for p in self.points]}

    @classmethod
    def from_dict(cls, data: dict) -> "VariantSweep":
        return cls(data["name"], [LrPoint.from_dict(p) for p in data["points"]],
                   {"low": 0, "high": 0, **data.get("widened", {})})


def next_lr(lr: float, up: bool) -> float:
    """The next value past ``lr`` on the 1, 3, 10, 30 series (0.03 -> 0.1, 0.003 -> 0.001);
    a value off the series moves a half-decade."""
    exponent = math.floor(math.log10(lr) + 1e-9)
    mantissa = lr / 10 ** exponent
    series = [1, 3, 10] if up else [3, 1, 0.3]
    for here, there in zip(series, series[1:]):
        if math.isclose(mantissa, here, rel_tol=1e-6):
            return float(f"{there * 10 ** exponent:.6g}")
    return lr * math.sqrt(10) if up else lr / math.sqrt(10)


def edge_is_settled(sweep: VariantSweep) -> bool:
    """A best lr at the grid's edge stands only once the grid was widened past that edge as
    far as the sweep widens it (MAX_WIDENINGS half-decades)."""
    edge = sweep.at_edge()
    return not edge or sweep.widened.get(edge, 0) >= MAX_WIDENINGS


def selection_config(config: TrainConfig, lr: float, seed: int) -> TrainConfig:
    """The sweep's run of ``config`` at ``lr`` and ``seed``: its validation part doubled, so
    training never sees the comparison's validation split nor the selection split before it;
    evaluated only at the end (the sweep scores the selection split itself)."""
    return dataclasses.replace(config, lr=lr, seed=seed, val_fraction=2 * config.val_fraction,
                               eval_every=config.steps, probe_every=0)


def selection_tokens(val_tokens: np.ndarray) -> np.ndarray:
    """The first half of the sweep run's validation part: the text the choice is made on
    (the second half is the comparison's own validation split)."""
    return val_tokens[: len(val_tokens) // 2]


def selection_loss(model, tokens: np.ndarray, config: TrainConfig) -> float:
    """Mean cross-entropy of ``model`` on fixed windows of ``tokens``."""
    import torch

    from ..data.windows import eval_windows
    from ..train.objectives import Batch, loss_and_logits

    model.eval()
    losses = []
    with torch.no_grad():
        for x, y in eval_windows(tokens, config.seq_len, config.batch_size,
                                 config.eval_batches):
            loss, _ = loss_and_logits(model, Batch((x,), y))
            losses.append(float(loss))
    return statistics.fmean(losses) if losses else math.inf


def train_one(graph: Graph, config: TrainConfig, tokenizer=None, corpus=None) -> float:
    """Train ``graph`` with ``config`` (no run folder) and return its selection loss (inf
    when the run failed, e.g. a loss that went to NaN at too high an lr)."""
    from ..train.trainer import Trainer

    trainer = Trainer(graph, config, tokenizer=tokenizer, corpus=corpus)
    end = trainer.run()
    if end.kind != "Finished" or trainer.session is None:
        return math.inf
    loss = selection_loss(trainer.model, selection_tokens(trainer.pipeline.val_tokens), config)
    return loss if math.isfinite(loss) else math.inf


Progress = Callable[[str], None]


def sweep_variant(name: str, graph: Graph, config: TrainConfig, *,
                  grid=DEFAULT_GRID, seeds=DEFAULT_SEEDS, confirm=CONFIRM_SEEDS,
                  widen: bool = True, progress: Progress = lambda line: None, tokenizer=None,
                  corpus=None, train: Callable | None = None,
                  recorded: VariantSweep | None = None) -> VariantSweep:
    """Train ``graph`` at each lr of ``grid`` and each seed; widen the grid past an edge that
    wins (up to MAX_WIDENINGS half-decades a side); then train the front-runners on the
    ``confirm`` seeds too. From a ``recorded`` sweep over ``seeds``, only what it lacks is
    trained (the confirmation, when it has none)."""
    train = train or train_one
    result = recorded or VariantSweep(name)
    wanted = list(seeds)
    todo = [] if recorded else sorted(grid)
    if recorded and recorded.confirmed:
        wanted += confirm
    while True:
        for lr in todo:
            point = result.point_at(lr)
            for seed in wanted[len(point.losses):]:
                start = time.perf_counter()
                loss = train(graph, selection_config(config, lr, seed), tokenizer, corpus)
                point.losses.append(loss)
                progress(f"{name}: lr {lr:.3g} seed {seed}: selection loss {loss:.4f} "
                         f"({time.perf_counter() - start:.0f}s)")
        if not any(math.isfinite(p.mean) for p in result.points):
            tried = ", ".join(f"{p.lr:g}" for p in result.points)
            raise ValueError(f"{name}: no lr of the sweep ({tried}) finished training; check "
                             "that the variant trains at all (tfstudio train) before tuning "
                             "its lr")
        todo = _widening(result, progress) if widen else []
        if not todo and confirm and len(wanted) == len(seeds):
            wanted += confirm
            todo = [p.lr for p in result.front_runners()]
            progress(f"{name}: confirming lrs {', '.join(f'{lr:.3g}' for lr in todo)} on "
                     f"seeds {', '.join(map(str, confirm))}")
        if not todo:
            return result


def _widening(result: VariantSweep, progress: Progress) -> list[float]:
    """[the next lr past the edge] when the best lr is an edge the grid may still widen past
    (counted in ``result.widened``), else []."""
    edge = result.at_edge()
    if not edge or result.widened[edge] >= MAX_WIDENINGS:
        return []
    result.widened[edge] += 1
    lr = next_lr(result.grid[0], up=False) if edge == "low" else \
        next_lr(result.grid[-1], up=True)
    progress(f"{result.name}: best lr {result.best.lr:.3g} is the grid's {edge} edge; "
             f"widening to {lr:.3g}")
    return [lr]


def sweep(variants: list[tuple[str, Graph]], config: TrainConfig, *, grid=DEFAULT_GRID,
          seeds=DEFAULT_SEEDS, confirm=CONFIRM_SEEDS, progress: Progress = lambda line: None,
          train: Callable | None = None, recorded: dict[str, VariantSweep] | None = None,
          on_variant: Callable[[VariantSweep], None] = lambda s: None) -> list[VariantSweep]:
    """Sweep every (name, graph) with the comparison's ``config`` (its steps, batch and
    corpus); the corpus is read and the tokenizer built once. A variant in ``recorded``
    trains only what its recorded sweep lacks (``sweep_variant``). ``on_variant`` gets each
    variant's sweep as it finishes (a long sweep saves as it goes)."""
    corpus, tokenizer = _text_of(config)
    results = []
    for name, graph in variants:
        results.append(sweep_variant(name, graph, config, grid=grid, seeds=seeds,
                                     confirm=confirm, progress=progress, tokenizer=tokenizer,
                                     corpus=corpus, train=train,
                                     recorded=(recorded or {}).get(name)))
        on_variant(results[-1])
    return results


def _text_of(config: TrainConfig):
    """(corpus, tokenizer) of ``config``, refused for a synthetic task (no held-out text)."""
    from ..data import build_tokenizer, load_corpus

    corpus = load_corpus(config.corpus, errors=config.corpus_errors)
    if corpus.task is not None:
        raise ValueError(f"--tune-lr chooses each lr on held-out text, and {config.corpus} is "
                         "a synthetic task with none; choose --lr yourself, or tune on a text "
                         "corpus")
    return corpus, build_tokenizer(config.tokenizer, corpus)


def starting_from(start: Callable[[int], str], train: Callable | None = None) -> Callable:
    """The sweep's training of a fine-tune: each seed's run starts from that seed's model
    (``start(seed)``: a run folder, trained once, the first time a seed asks), otherwise
    trained as ``train`` (``train_one``) trains."""
    starts: dict[int, str] = {}

    def fine_tune(graph, config, tokenizer=None, corpus=None):
        if config.seed not in starts:
            starts[config.seed] = start(config.seed)
        return (train or train_one)(graph, dataclasses.replace(config,
                                                               init_from=starts[config.seed]),
                                    tokenizer, corpus)
    return fine_tune


def train_start(graph: Graph, config: TrainConfig, lr: float, seed: int, run_dir,
                tokenizer=None, corpus=None) -> str:
    """The model a fine-tune's sweep starts from: ``graph`` trained as the sweep trains it
    (``selection_config``: on the text before the selection split, which it never sees) at
    ``lr`` and ``seed``, kept in ``run_dir``; returns that folder."""
    from ..train.trainer import Trainer

    end = Trainer(graph, selection_config(config, lr, seed), run_dir=run_dir,
                  tokenizer=tokenizer, corpus=corpus).run()
    if end.kind != "Finished":
        raise ValueError(f"the model the fine-tunes start from did not train at lr {lr:g}, "
                         f"seed {seed}: {getattr(end, 'message', end.kind)}")
    return str(run_dir)


def sweep_fine_tunes(start: tuple[Graph, TrainConfig, float], tunes: list[tuple[str, Graph]],
                     config: TrainConfig, *, grid=DEFAULT_GRID, seeds=DEFAULT_SEEDS,
                     confirm=CONFIRM_SEEDS, progress: Progress = lambda line: None,
                     train: Callable | None = None,
                     recorded: dict[str, VariantSweep] | None = None,
                     on_variant: Callable[[VariantSweep], None] = lambda s: None
                     ) -> list[VariantSweep]:
    """Sweep fine-tunes (``tunes``, each trained with ``config``) of one model: ``start``
    (its graph, config and chosen lr) is trained on the sweep's training split once for each
    seed a tune's run needs, and every tune's run of that seed starts from it (``sweep``,
    ``starting_from``)."""
    import tempfile
    from pathlib import Path

    corpus, tokenizer = _text_of(config)
    graph, start_config, lr = start
    with tempfile.TemporaryDirectory() as folder:
        def start_of(seed: int) -> str:
            began = time.perf_counter()
            made = train_start(graph, start_config, lr, seed, Path(folder) / str(seed),
                               tokenizer, corpus)
            progress(f"the start of the fine-tunes: lr {lr:g} seed {seed} trained "
                     f"({time.perf_counter() - began:.0f}s)")
            return made
        return sweep(tunes, config, grid=grid, seeds=seeds, confirm=confirm,
                     progress=progress, train=starting_from(start_of, train),
                     recorded=recorded, on_variant=on_variant)


def table(sweeps: list[VariantSweep]) -> list[str]:
    """A markdown table: a row per variant, its selection loss (mean ± spread over seeds) at
    each lr tried, the seeds' count beside an lr confirmed on more seeds, the chosen lr in
    bold (the lowest mean in italics where the one-standard-error rule chose a smaller
    lr)."""
    lrs = sorted({p.lr for s in sweeps for p in s.points})
    lines = ["| variant | " + " | ".join(f"{lr:.3g}" for lr in lrs) + " | chosen lr |",
             "|---" * (len(lrs) + 2) + "|"]
    for s in sweeps:
        cells = []
        for lr in lrs:
            point = next((p for p in s.points if math.isclose(p.lr, lr)), None)
            text = "" if point is None else point.text() + \
                (f" ({len(point.losses)} seeds)" if s.confirmed and any(point is c for c in s.candidates)
                 else "")
            cells.append(f"**{text}**" if point is s.chosen else
                         f"*{text}*" if point is s.best else text)
        lines.append(f"| {s.name} | " + " | ".join(cells) + f" | {s.chosen_lr:.3g} |")
    return lines


# in a comparison's folder: compare --tune-lr's sweep (apart from the norm lesson's own
# lr_sweep.json, a measure of its claim, which a course writes into the lesson's folder)
SWEEP_FILE = "tuned_lrs.json"


def tune(out, variants: list[tuple[str, Graph]], config: TrainConfig, *, grid=DEFAULT_GRID,
         seeds=DEFAULT_SEEDS, confirm=CONFIRM_SEEDS, progress: Progress = lambda line: None,
         train: Callable | None = None) -> dict[str, float]:
    """``compare --tune-lr``: sweep the comparison's variants, keep the sweep in
    OUT/tuned_lrs.json (reused when it holds every variant at these settings), and return each
    variant's chosen lr by name."""
    import json
    from pathlib import Path

    path = Path(out) / SWEEP_FILE
    settings = {"steps": config.steps, "batch_size": config.batch_size,
                "seq_len": config.seq_len, "corpus": config.corpus,
                "tokenizer": config.tokenizer, "grid": sorted(grid), "seeds": list(seeds),
                "confirm_seeds": list(confirm)}
    if path.exists():
        kept = json.loads(path.read_text(encoding="utf-8"))
        names = {v["name"] for v in kept["variants"]}
        if kept["settings"] == settings and names >= {n for n, _ in variants}:
            progress(f"lr sweep: reusing {path}")
            return {v["name"]: VariantSweep.from_dict(v).chosen_lr for v in kept["variants"]}
    sweeps = sweep(variants, config, grid=grid, seeds=seeds, confirm=confirm,
                   progress=progress, train=train)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"settings": settings,
                                "variants": [s.to_dict() for s in sweeps]}, indent=1),
                    encoding="utf-8")
    return {s.name: s.chosen_lr for s in sweeps}


def saved_table(out) -> list[str]:
    """The markdown table of the sweep kept in OUT (none: [])."""
    import json
    from pathlib import Path

    path = Path(out) / SWEEP_FILE
    if not path.exists():
        return []
    kept = json.loads(path.read_text(encoding="utf-8"))
    return table([VariantSweep.from_dict(v) for v in kept["variants"]])
