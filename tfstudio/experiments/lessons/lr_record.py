"""The lessons' recorded lr sweeps (``lr_sweeps.json`` beside this module, written by
``bench/sweep_lr.py``): for each lesson and budget, the command, date, grid, seeds, every
variant's selection loss per lr and the lr chosen. A lesson trains each variant at its chosen
lr; this module is the one place that reads or writes the record."""
from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:       # Windows: no advisory locks; run one sweep at a time there
    fcntl = None

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


@contextlib.contextmanager
def _editing(path: Path):
    """The record, loaded, changed by the caller and written whole, with no other process in
    between: two sweeps recording at once would each write back the record without the
    other's variant. The lock is the record's folder (flock), so no lock file is left."""
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        if fcntl is not None:
            fcntl.flock(folder, fcntl.LOCK_EX)
        record = load(path)
        yield record
        _save(record, path)
    finally:
        os.close(folder)            # closing drops the lock


def save_variant(lesson: str, budget: float, header: dict, sweep: dict,
                 path: Path = RECORD_PATH, apart: bool = False) -> None:
    """Add (or replace) one variant's sweep under the lesson's key; ``header`` (command,
    date, grid, seeds, steps) replaces the entry's. A variant swept ``apart`` from an entry
    already recorded (``--only``) keeps its own command and date and leaves the entry's.
    Written whole."""
    with _editing(path) as record:
        item = record.setdefault(key(lesson, budget), {"variants": {}})
        if apart and item["variants"]:
            sweep = {**sweep, "command": header["command"], "date": header["date"]}
        else:
            item.update(header)
        item["variants"][sweep["name"]] = sweep


def rechoose(path: Path = RECORD_PATH) -> list[str]:
    """Apply the sweep's choice rule again to every recorded variant's own losses (no run is
    trained) and write the record back; returns a line per lr that changed."""
    from ..sweep import VariantSweep

    changed = []
    with _editing(path) as record:
        for name, item in record.items():
            for variant, sweep in item["variants"].items():
                chosen = VariantSweep.from_dict(sweep)
                if sweep["lr"] != chosen.chosen_lr:
                    changed.append(f"{name} {variant}: {sweep['lr']:g} -> "
                                   f"{chosen.chosen_lr:g}")
                sweep.update(lr=chosen.chosen_lr, at_edge=chosen.at_edge())
    return changed


# what must match for two sweeps to be the same sweep (the lr and seed are the sweep's own)
SAME_TRAINING = ("corpus", "tokenizer", "steps", "batch_size", "seq_len", "warmup_steps",
                 "val_fraction", "min_lr_ratio", "lr_decay_steps", "grad_accum", "eval_batches")


def recorded_twin(graph, config, grid, seeds, path: Path = RECORD_PATH, confirm=None
                  ) -> tuple[str, dict] | None:
    """("lesson variant", its recorded sweep) of a variant already swept that is the same
    model with the same training, grid and seeds (a lesson's base is often another lesson's
    variant: the runs would repeat to the last digit), or None."""
    from ...graph.compare import same_model
    from ..sweep import CONFIRM_SEEDS
    from ..variants import expand
    from . import LESSONS, prepare

    confirm = list(CONFIRM_SEEDS if confirm is None else confirm)
    for name, item in load(path).items():
        lesson = LESSONS.get(name.split("@")[0])
        if lesson is None or lesson.run is not None or list(item["grid"]) != list(grid) or \
                list(item["seeds"]) != list(seeds) or item.get("confirm_seeds", []) != confirm:
            continue
        run = prepare(lesson.name, steps=item["steps"])
        if any(getattr(run.config, f) != getattr(config, f) for f in SAME_TRAINING):
            continue
        for variant in expand(run.base, run.varies):
            if variant.name in item["variants"] and same_model(variant.graph, graph, True):
                return f"{name} {variant.name}", item["variants"][variant.name]
    return None


# what a twin takes from the sweep it is the same as (its name and own settings stay)
TWIN_TAKES = ("points", "lr", "at_edge", "widened")


def refresh_twins(path: Path = RECORD_PATH) -> list[str]:
    """Copy into every recorded twin (``same_as``) its source's sweep as recorded now (after
    the source was confirmed, say); returns "lesson variant" of each twin that changed."""
    changed = []
    with _editing(path) as record:
        def source_of(variant: dict) -> tuple[dict, dict]:
            """(the entry, the sweep) a twin is the same as, through a twin of a twin."""
            entry_key, name = variant["same_as"].split(" ", 1)
            source = record[entry_key]["variants"][name]
            return source_of(source) if "same_as" in source else (record[entry_key], source)

        for name, item in record.items():
            for variant in item["variants"].values():
                if "same_as" not in variant:
                    continue
                source_entry, source = source_of(variant)
                taken = {k: source[k] for k in TWIN_TAKES if k in source}
                if any(variant.get(k) != v for k, v in taken.items()):
                    variant.update(taken)
                    changed.append(f"{name} {variant['name']}")
                if "confirm_seeds" in source_entry:          # an entry of twins alone
                    item.setdefault("confirm_seeds", source_entry["confirm_seeds"])
    return changed


def recorded_sweep(record: dict, lesson: str, variant: str, lr: float):
    """The sweep in ``record`` (a VariantSweep) that chose ``lr`` for ``variant`` of
    ``lesson``, at whichever budget; None when none did."""
    from ..sweep import VariantSweep

    for name, item in record.items():
        found = item["variants"].get(variant)
        if name.split("@")[0] == lesson and found and found["lr"] == lr:
            return VariantSweep.from_dict(found)
    return None


def unsteady_sentence(lesson: str, lrs: dict[str, float], path: Path = RECORD_PATH) -> str:
    """"Unsteady one lr up: ..." naming each variant trained at ``lrs`` whose sweep found the
    next lr up fast on some seeds and stalled on others (``VariantSweep.unsteady_above``),
    or ""."""
    from ..sweep import STALL_SHARE

    named, record = [], load(path)      # read once for every variant
    for variant, lr in lrs.items():
        sweep = recorded_sweep(record, lesson, variant, lr)
        faster = sweep.unsteady_above() if sweep else None
        if faster is None:
            continue
        mean = sweep.chosen.mean
        below = sum(x < mean for x in faster.losses)
        stalled = sum(x >= (1 + STALL_SHARE) * mean for x in faster.losses)
        named.append(f"{variant} trains at {lr:g} (selection loss {sweep.chosen.text()}) "
                     f"because at {faster.lr:g} its {len(faster.losses)} sweep seeds ended "
                     f"at {', '.join(f'{x:.3f}' for x in faster.losses)}: below {lr:g}'s mean on "
                     f"{below}, {STALL_SHARE:.0%} or more above it on {stalled}")
    if not named:
        return ""
    return ("Unsteady one lr up (from the recorded sweep): " + "; ".join(named) +
            ". A faster lr that some seeds ride and others stall at is the cliff the "
            "one-standard-error rule keeps off; the lower lr may still be learning at the end.")


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
                 seeds=None, confirm=None, only: list[str] | None = None, command: str = "",
                 progress=lambda line: None, path: Path = RECORD_PATH, train=None,
                 resume: bool = False) -> list:
    """Sweep every variant of lesson ``name`` at its own steps (times ``budget``) and record
    each as it finishes; returns the sweeps. ``only`` limits it to the variants named. A
    variant that is the same model as one already recorded at the same training takes that
    record (noted as ``same_as``) instead of training again. With ``resume``, each recorded
    variant trains only what its record lacks (its confirmation on the ``confirm`` seeds),
    on the record's own grid and seeds; twins are left for ``refresh_twins``."""
    import datetime

    from .. import sweep as lr_sweep
    from ..variants import expand
    from . import LESSONS, prepare

    seeds = tuple(seeds or lr_sweep.DEFAULT_SEEDS)
    confirm = tuple(lr_sweep.CONFIRM_SEEDS if confirm is None else confirm)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = {"command": command, "date": date, "seeds": list(seeds), "budget": budget,
              "confirm_seeds": list(confirm),
              "chosen_on": "selection split (the text just before the validation split)",
              "reported_on": "validation split"}
    kept = {}
    if resume:
        item = entry(name, budget, path)
        if item is None:
            raise ValueError(f"{key(name, budget)}: no sweep recorded to resume; sweep it "
                             "first")
        if grid is not None or (steps is not None and steps != item["steps"]):
            raise ValueError(f"{key(name, budget)}: resuming keeps the record's grid and "
                             "steps; drop --grid and --steps")
        seeds, steps = tuple(item["seeds"]), item["steps"]
        grid = item["grid"] if LESSONS[name].run is None else None
        header = {"confirm_seeds": list(confirm), "confirm_command": command,
                  "confirm_date": date}
        kept = {v: lr_sweep.VariantSweep.from_dict(d) for v, d in item["variants"].items()
                if "same_as" not in d}
    if name in LESSONS and LESSONS[name].run is not None:
        return _sweep_own(LESSONS[name], budget=budget, steps=steps, grid=grid, seeds=seeds,
                          confirm=confirm, only=only, header=header, progress=progress,
                          path=path, train=train, resume=resume, kept=kept)
    # resuming trains at the record's own steps (already times its budget)
    run = prepare(name, steps=steps) if resume else prepare(name, budget=budget, steps=steps)
    grid = tuple(grid or lr_sweep.DEFAULT_GRID)
    if not resume:
        header.update(grid=list(grid), steps=run.config.steps,
                      batch_size=run.config.batch_size, seq_len=run.config.seq_len)
    apart = bool(only) and not resume      # a confirmation keeps the entry's command
    sweeps = []
    for v in expand(run.base, run.varies):
        if only and v.name not in only:
            continue
        twin = None if resume else recorded_twin(v.graph, run.config, grid, seeds, path,
                                                 confirm)
        if resume and v.name not in kept:
            continue                                   # a twin: refresh_twins copies it
        if twin is not None:
            progress(f"{v.name}: the same model and training as {twin[0]}; its sweep is kept")
            recorded = {**twin[1], "name": v.name, "same_as": twin[0]}
            save_variant(name, budget, header, recorded, path, apart=apart)
            sweeps.append(lr_sweep.VariantSweep.from_dict(recorded))
            continue
        sweeps += lr_sweep.sweep([(v.name, v.graph)], run.config, grid=grid, seeds=seeds,
                                 confirm=confirm, progress=progress, train=train,
                                 recorded=kept,
                                 on_variant=lambda s: save_variant(name, budget, header,
                                                                   s.to_dict(), path,
                                                                   apart=apart))
    return sweeps


def _sweep_own(lesson, *, budget, steps, grid, seeds, confirm, only, header, progress, path,
               train, resume, kept) -> list:
    """``sweep_lesson`` of a lesson that trains itself: each of its ``sweeps`` trainings on
    its own grid, the first one's settings in the header and a later one's own where they
    differ. A training with no ``start`` takes a recorded twin's sweep (``recorded_twin``)
    or is swept; the fine-tunes of one start are swept together from it, trained at the
    lr just chosen for it (or recorded). Resuming, ``kept`` holds the recorded sweeps by
    name and ``steps`` the record's own (already times its budget)."""
    from .. import sweep as lr_sweep

    if lesson.sweeps is None:
        raise ValueError(f"lesson {lesson.name} trains itself and names no training to sweep")
    if grid is not None:
        raise ValueError(f"lesson {lesson.name} sweeps each of its trainings on its own grid; "
                         "drop --grid")
    if budget != 1 and not resume:
        steps = max(1, round((steps or lesson.training["steps"]) * budget))
    trainings = lesson.sweeps(steps)
    first = trainings[0]
    if not resume:
        header.update(grid=list(first.grid), steps=first.config.steps,
                      batch_size=first.config.batch_size, seq_len=first.config.seq_len)
    settings = header if not resume else entry(lesson.name, budget, path)

    def own(t: Swept) -> dict:
        mine = {"steps": t.config.steps, "batch_size": t.config.batch_size,
                "seq_len": t.config.seq_len, "grid": list(t.grid)}
        return {**{k: v for k, v in mine.items() if v != settings[k]},
                **({"starts_from": t.start} if t.start else {})}

    by_name = {t.name: t for t in trainings}

    def save(recorded: dict) -> None:
        save_variant(lesson.name, budget, header, {**recorded, **own(by_name[recorded["name"]])},
                     path)

    wanted = [t for t in trainings if not only or t.name in only]
    sweeps, chosen = [], {}
    for t in wanted:
        if t.start or (resume and t.name not in kept):
            continue                     # a fine-tune, or (resuming) a twin
        twin = None if resume else recorded_twin(t.graph, t.config, t.grid, seeds, path,
                                                 confirm)
        if twin is not None:
            progress(f"{t.name}: the same model and training as {twin[0]}; its sweep is kept")
            recorded = {**twin[1], "name": t.name, "same_as": twin[0]}
            save(recorded)
            sweeps.append(lr_sweep.VariantSweep.from_dict(recorded))
        else:
            sweeps += lr_sweep.sweep([(t.name, t.graph)], t.config, grid=t.grid, seeds=seeds,
                                     confirm=confirm, progress=progress, train=train,
                                     recorded=kept, on_variant=lambda s: save(s.to_dict()))
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
            tunes[0].config, grid=tunes[0].grid, seeds=seeds, confirm=confirm,
            progress=progress, train=train, recorded=kept,
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
                  f"lessons report on the {item['reported_on']}.", *_confirmation(item), ""]
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


def _confirmation(item: dict) -> list[str]:
    """The entry's line on its confirmation (none when it has no confirming seeds)."""
    seeds = item.get("confirm_seeds")
    if not seeds:
        return []
    how = f" (`{item['confirm_command']}`, {item['confirm_date']})" \
        if "confirm_command" in item else ""
    return [f"The two lowest means of each variant trained again on seeds "
            f"{', '.join(map(str, seeds))}{how}; the rule chose among those two, on "
            f"{len(item['seeds']) + len(seeds)} seeds each (marked)."]


SECTION_HEAD = """## Lessons: each variant's own best lr (issue 38)

Every lesson variant trains at the lr its sweep chose: `bench/sweep_lr.py` trains it at each lr
of a log-spaced grid over 2 seeds at the lesson's own steps and scores it on the selection
split (the tenth of the text just before the validation split; the sweep's runs train on the
text before that). The chosen lr (bold) is the smallest whose mean loss lies within one
standard error of the lowest mean (italic where it differs): the one-standard-error rule
(Hastie, Tibshirani & Friedman, *Elements of Statistical Learning* 7.10), because a larger lr
that wins inside its seeds' noise sits next to the divergence cliff. The grid is widened past
an edge where the lowest mean lies. Two seeds cannot show an lr where one run in four stalls,
so the two lowest means then train on two more seeds that no lesson trains, and the rule
chooses among those two. The lessons report
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
