"""The lessons' recorded lr sweeps (``lr_sweeps.json`` beside this module, written by
``bench/sweep_lr.py``): for each lesson and budget, the command, date, grid, seeds, every
variant's selection loss per lr and the lr chosen. A lesson trains each variant at its chosen
lr; this module is the one place that reads or writes the record."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...graph import Graph
from ...runs import TrainConfig
from ...runs.disk import write_whole

RECORD_PATH = Path(__file__).with_name("lr_sweeps.json")
# lessons with a variant that has no recorded sweep yet (it trains at LESSON_TRAINING's
# shared lr and the page says so); a test keeps this list true both ways
NOT_SWEPT: frozenset[str] = frozenset()


def key(lesson: str, budget: float = 1) -> str:
    """The record's key: "history" at the lesson's own budget, "history@4x" at four times it."""
    return lesson if budget == 1 else f"{lesson}@{budget:g}x"


def load(path: Path = RECORD_PATH) -> dict:
    """Every recorded sweep, by key (empty when nothing is recorded)."""
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def entry(lesson: str, budget: float = 1, path: Path = RECORD_PATH) -> dict | None:
    return load(path).get(key(lesson, budget))


def chosen_lrs(lesson: str, budget: float = 1, path: Path = RECORD_PATH
               ) -> tuple[dict[str, float], float]:
    """({variant name: chosen lr}, the budget those lrs were swept at): the sweep at
    ``budget`` when one is recorded, else the one at the lesson's own budget (1), else
    ({}, 0)."""
    for b in (budget, 1):
        found = entry(lesson, b, path)
        if found:
            return {name: v["lr"] for name, v in found["variants"].items()}, b
    return {}, 0


def _save(record: dict, path: Path) -> None:
    """The record, written whole (the old file stays until the new one is complete)."""
    write_whole(path, json.dumps(record, indent=1, sort_keys=True) + "\n")


def save_variant(lesson: str, budget: float, header: dict, sweep: dict,
                 path: Path = RECORD_PATH, apart: bool = False) -> None:
    """Add (or replace) one variant's sweep under the lesson's key; ``header`` (command,
    date, grid, seeds, steps) replaces the entry's. A variant swept ``apart`` from an entry
    already recorded (``--only``) keeps its own command and date and leaves the entry's.
    Written whole."""
    record = load(path)
    item = record.setdefault(key(lesson, budget), {"variants": {}})
    if apart and item["variants"]:
        sweep = {**sweep, "command": header["command"], "date": header["date"]}
    else:
        item.update(header)
    item["variants"][sweep["name"]] = sweep
    _save(record, path)


def rechoose(path: Path = RECORD_PATH) -> list[str]:
    """Apply the sweep's choice rule again to every recorded variant's own losses (no run is
    trained) and write the record back; returns a line per lr that changed."""
    from ..sweep import VariantSweep

    record, changed = load(path), []
    for name, item in record.items():
        for variant, sweep in item["variants"].items():
            chosen = VariantSweep.from_dict(sweep)
            if sweep["lr"] != chosen.chosen_lr:
                changed.append(f"{name} {variant}: {sweep['lr']:g} -> {chosen.chosen_lr:g}")
            sweep.update(lr=chosen.chosen_lr, at_edge=chosen.at_edge())
    _save(record, path)
    return changed


# what must match for two sweeps to be the same sweep (the lr and seed are the sweep's own)
SAME_TRAINING = ("corpus", "tokenizer", "steps", "batch_size", "seq_len", "warmup_steps",
                 "val_fraction", "min_lr_ratio", "lr_decay_steps", "grad_accum", "eval_batches")


def recorded_twin(graph, config, grid, seeds, path: Path = RECORD_PATH
                  ) -> tuple[str, dict] | None:
    """("lesson variant", its recorded sweep) of a variant already swept that is the same
    model with the same training, grid and seeds (a lesson's base is often another lesson's
    variant: the runs would repeat to the last digit), or None."""
    from ...graph.compare import same_model
    from ..variants import expand
    from . import LESSONS, prepare

    for name, item in load(path).items():
        lesson = LESSONS.get(name.split("@")[0])
        if lesson is None or lesson.run is not None or list(item["grid"]) != list(grid) or \
                list(item["seeds"]) != list(seeds):
            continue
        run = prepare(lesson.name, steps=item["steps"])
        if any(getattr(run.config, f) != getattr(config, f) for f in SAME_TRAINING):
            continue
        for variant in expand(run.base, run.varies):
            if variant.name in item["variants"] and same_model(variant.graph, graph, True):
                return f"{name} {variant.name}", item["variants"][variant.name]
    return None


@dataclass(frozen=True)
class Swept:
    """One training of a lesson that trains itself (``Lesson.sweeps``), swept on its own
    ``grid``; ``start`` names the earlier training it fine-tunes (the sweep trains that one at
    its chosen lr, per seed, and starts each run from it)."""
    name: str
    graph: Graph
    config: TrainConfig
    grid: tuple[float, ...]
    start: str = ""


# a variant's own settings in the record, where they differ from its entry's header
OWN_SETTINGS = ("steps", "batch_size", "seq_len", "grid")


def settings_of(item: dict, variant: dict) -> dict:
    """A recorded variant's steps, batch, length and grid: its own, else its entry's."""
    return {k: variant.get(k, item.get(k)) for k in OWN_SETTINGS}


def sweep_lesson(name: str, *, budget: float = 1, steps: int | None = None, grid=None,
                 seeds=None, only: list[str] | None = None, command: str = "",
                 progress=lambda line: None, path: Path = RECORD_PATH,
                 train=None) -> list:
    """Sweep every variant of lesson ``name`` at its own steps (times ``budget``) and record
    each as it finishes; returns the sweeps. ``only`` limits it to the variants named. A
    variant that is the same model as one already recorded at the same training takes that
    record (noted as ``same_as``) instead of training again."""
    import datetime

    from .. import sweep as lr_sweep
    from ..variants import expand
    from . import LESSONS, prepare

    seeds = tuple(seeds or lr_sweep.DEFAULT_SEEDS)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = {"command": command, "date": date, "seeds": list(seeds), "budget": budget,
              "chosen_on": "selection split (the text just before the validation split)",
              "reported_on": "validation split"}
    if name in LESSONS and LESSONS[name].run is not None:
        return _sweep_own(LESSONS[name], budget=budget, steps=steps, grid=grid, seeds=seeds,
                          only=only, header=header, progress=progress, path=path, train=train)
    run = prepare(name, budget=budget, steps=steps)
    grid = tuple(grid or lr_sweep.DEFAULT_GRID)
    header.update(grid=list(grid), steps=run.config.steps, batch_size=run.config.batch_size,
                  seq_len=run.config.seq_len)
    sweeps = []
    for v in expand(run.base, run.varies):
        if only and v.name not in only:
            continue
        twin = recorded_twin(v.graph, run.config, grid, seeds, path)
        if twin is not None:
            progress(f"{v.name}: the same model and training as {twin[0]}; its sweep is kept")
            recorded = {**twin[1], "name": v.name, "same_as": twin[0]}
            save_variant(name, budget, header, recorded, path, apart=bool(only))
            sweeps.append(lr_sweep.VariantSweep.from_dict(recorded))
            continue
        sweeps += lr_sweep.sweep([(v.name, v.graph)], run.config, grid=grid, seeds=seeds,
                                 progress=progress, train=train,
                                 on_variant=lambda s: save_variant(name, budget, header,
                                                                   s.to_dict(), path,
                                                                   apart=bool(only)))
    return sweeps


def _sweep_own(lesson, *, budget, steps, grid, seeds, only, header, progress, path,
               train) -> list:
    """``sweep_lesson`` of a lesson that trains itself: each of its ``sweeps`` trainings on
    its own grid, the first one's settings in the header and a later one's own where they
    differ. A training with no ``start`` takes a recorded twin's sweep (``recorded_twin``)
    or is swept; the fine-tunes of one start are swept together from it, trained at the
    lr just chosen for it (or recorded)."""
    from .. import sweep as lr_sweep

    if lesson.sweeps is None:
        raise ValueError(f"lesson {lesson.name} trains itself and names no training to sweep")
    if grid is not None:
        raise ValueError(f"lesson {lesson.name} sweeps each of its trainings on its own grid; "
                         "drop --grid")
    if budget != 1:
        steps = max(1, round((steps or lesson.training["steps"]) * budget))
    trainings = lesson.sweeps(steps)
    first = trainings[0]
    header.update(grid=list(first.grid), steps=first.config.steps,
                  batch_size=first.config.batch_size, seq_len=first.config.seq_len)

    def own(t: Swept) -> dict:
        mine = {"steps": t.config.steps, "batch_size": t.config.batch_size,
                "seq_len": t.config.seq_len, "grid": list(t.grid)}
        return {**{k: v for k, v in mine.items() if v != header[k]},
                **({"starts_from": t.start} if t.start else {})}

    by_name = {t.name: t for t in trainings}

    def save(recorded: dict) -> None:
        save_variant(lesson.name, budget, header, {**recorded, **own(by_name[recorded["name"]])},
                     path)

    wanted = [t for t in trainings if not only or t.name in only]
    sweeps, chosen = [], {}
    for t in wanted:
        if t.start:
            continue
        twin = recorded_twin(t.graph, t.config, t.grid, seeds, path)
        if twin is not None:
            progress(f"{t.name}: the same model and training as {twin[0]}; its sweep is kept")
            recorded = {**twin[1], "name": t.name, "same_as": twin[0]}
            save(recorded)
            sweeps.append(lr_sweep.VariantSweep.from_dict(recorded))
        else:
            sweeps += lr_sweep.sweep([(t.name, t.graph)], t.config, grid=t.grid, seeds=seeds,
                                     progress=progress, train=train,
                                     on_variant=lambda s: save(s.to_dict()))
        chosen[t.name] = sweeps[-1].chosen_lr
    for start in dict.fromkeys(t.start for t in wanted if t.start):
        tunes = [t for t in wanted if t.start == start]
        if any(t.config != tunes[0].config or t.grid != tunes[0].grid for t in tunes):
            raise ValueError(f"lesson {lesson.name}: the fine-tunes of {start} differ in "
                             "training or grid; sweep them apart (--only)")
        begin = by_name[start]
        if start not in chosen:
            recorded = chosen_lrs(lesson.name, budget, path)[0]
            if start not in recorded:
                raise ValueError(f"lesson {lesson.name}: {start}, which the fine-tunes start "
                                 "from, has no recorded sweep; sweep it first")
            chosen[start] = recorded[start]
        sweeps += lr_sweep.sweep_fine_tunes(
            (begin.graph, begin.config, chosen[start]), [(t.name, t.graph) for t in tunes],
            tunes[0].config, grid=tunes[0].grid, seeds=seeds, progress=progress, train=train,
            on_variant=lambda s: save(s.to_dict()))
    return sweeps


def markdown(path: Path = RECORD_PATH) -> list[str]:
    """The record as markdown (docs/BENCHMARKS.md): per lesson its command, date, grid and
    seeds, then the table of selection losses per lr with the chosen lr."""
    from ..sweep import VariantSweep, table

    lines = []
    for name, item in sorted(load(path).items()):
        def group(v: dict) -> tuple:
            own = settings_of(item, v)
            return (own["steps"], own["batch_size"], own["seq_len"], tuple(own["grid"]),
                    v.get("starts_from", ""))
        groups: dict[tuple, list] = {group({}): []}   # variants by their settings, header's first
        for v in item["variants"].values():
            groups.setdefault(group(v), []).append(VariantSweep.from_dict(v))
        groups = {k: v for k, v in groups.items() if v}
        lines += [f"#### {name}: {len(item['variants'])} variant(s), {item['steps']} steps, "
                  f"seeds {', '.join(map(str, item['seeds']))}", "",
                  f"`{item['command']}` ({item['date']}); grid "
                  f"{', '.join(f'{x:g}' for x in item['grid'])}, widened past an edge that won. "
                  f"Selection loss (mean ± spread over seeds) on the {item['chosen_on']}; the "
                  f"lessons report on the {item['reported_on']}.", ""]
        for (steps, batch, length, grid, start), sweeps in groups.items():
            if start:
                lines += [f"Fine-tunes of {start}, each seed's runs starting from its model "
                          f"trained at its chosen lr: {steps} step{'s' * (steps != 1)} of "
                          f"{batch} x {length} "
                          f"tokens, grid {', '.join(f'{x:g}' for x in grid)}, chosen at "
                          f"{length} tokens.", ""]
            lines += [*table(sweeps), ""]
        lines += [f"{v['name']} was swept apart: `{v['command']}` ({v['date']})."
                  for v in item["variants"].values() if "command" in v]
        lines += [""] if lines[-1] != "" else []
    return lines


SECTION_HEAD = """## Lessons: each variant's own best lr (issue 38)

Every lesson variant trains at the lr its sweep chose: `bench/sweep_lr.py` trains it at each lr
of a log-spaced grid over 2 seeds at the lesson's own steps and scores it on the selection
split (the tenth of the text just before the validation split; the sweep's runs train on the
text before that). The chosen lr (bold) is the smallest whose mean loss lies within one
standard error of the lowest mean (italic where it differs): the one-standard-error rule
(Hastie, Tibshirani & Friedman, *Elements of Statistical Learning* 7.10), because a larger lr
that wins inside its seeds' noise sits next to the divergence cliff. The grid is widened past
an edge where the lowest mean lies. The lessons report
on the validation split, which the choice never saw. The record is
`tfstudio/experiments/lessons/lr_sweeps.json`; this section is written from it."""
DOCS_START, DOCS_END = "<!-- lr-sweeps: bench/sweep_lr.py --table --write -->", "<!-- /lr-sweeps -->"


def docs_section(text: str) -> str:
    """The record's section of docs/BENCHMARKS.md (between its markers; "" when absent)."""
    if DOCS_START not in text or DOCS_END not in text:
        return ""
    return text.split(DOCS_START, 1)[1].split(DOCS_END, 1)[0].strip("\n")


def write_docs(docs: Path | None = None, path: Path = RECORD_PATH) -> None:
    """Replace the record's section of docs/BENCHMARKS.md with ``markdown()`` (appended
    under SECTION_HEAD the first time)."""
    docs = docs or Path(__file__).resolve().parents[3] / "docs" / "BENCHMARKS.md"
    text = docs.read_text(encoding="utf-8")
    block = DOCS_START + "\n" + "\n".join(markdown(path)).strip("\n") + "\n" + DOCS_END
    if DOCS_START in text and DOCS_END in text:
        head, rest = text.split(DOCS_START, 1)
        text = head + block + rest.split(DOCS_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + SECTION_HEAD + "\n\n" + block + "\n"
    docs.write_text(text, encoding="utf-8")
