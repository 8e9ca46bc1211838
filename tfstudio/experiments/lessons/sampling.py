"""Temperature, top-k and top-p against what they do to text: one model trained as usual, then
sampled at each setting of a grid and measured (``experiments.course.sampling``) by the
lesson's ``measure`` step. The measurements are kept in each run's folder (sampling.json), so
a page is rewritten without sampling again."""
from __future__ import annotations

import json
from pathlib import Path

from ...runs.disk import write_whole
from ..course.sampling import DEFAULT_GRID, Setting, sample_table_for_run
from . import register
from .lesson import FAILS, HOLDS, UNDECIDED, Check, Lesson, Sample, both, fact, higher, lower
from .measures import unmeasured
from .training import LESSON_TRAINING

CLAIM = ("temperature trades repetition for drift: a low temperature repeats itself, a high "
         "one drifts away from the corpus; top-p adapts to the model's confidence (few "
         "candidates where it is sure, many where it is not) where top-k keeps k everywhere.")
PROMPTS = ("Once upon a time", "One morning")
LOW, MID, HIGH = Setting(0.5), Setting(1.0), Setting(2.0)
TOP_K, TOP_P = Setting(1.0, top_k=40), Setting(1.0, top_p=0.9)
FILE = "sampling.json"
SAMPLES, NEW_TOKENS = 2, 100   # texts per prompt and setting, tokens each (1.2 CPU s/setting)
ADAPTS = 2.0   # top-p adapts when its kept count spans at least this factor
# repetition needs long texts: greedy and three temperatures, 600 characters each (a character
# model's 100-character texts repeat no word 4-gram, greedy included)
REPEAT_FILE, REPEAT_CHARS = "repetition.json", 600
GREEDY, COOL, HOT = Setting(0.0), Setting(0.5), Setting(1.5)
REPEAT_GRID = (GREEDY, COOL, MID, HOT)


def measure(c, progress=lambda line: None) -> None:
    """Sample every run at every setting of the grid, unless its sampling.json exists, and at
    REPEAT_GRID in texts of REPEAT_CHARS characters, unless its repetition.json exists."""
    for run, path in unmeasured(c, FILE):
        progress(f"sampling {run.run_dir} at {len(DEFAULT_GRID)} settings")
        rows = sample_table_for_run(run.run_dir, prompts=PROMPTS, grid=DEFAULT_GRID,
                                    samples=SAMPLES, max_new_tokens=NEW_TOKENS)
        write_whole(path, json.dumps([r.as_dict() for r in rows], indent=1))
    for run, path in unmeasured(c, REPEAT_FILE):
        progress(f"sampling {REPEAT_CHARS}-character texts from {run.run_dir}")
        rows = sample_table_for_run(run.run_dir, prompts=PROMPTS, grid=REPEAT_GRID,
                                    # a token decodes to a character or more
                                    samples=SAMPLES, max_new_tokens=REPEAT_CHARS)
        write_whole(path, json.dumps([r.as_dict() for r in rows], indent=1))


def table(run_dir: Path, file: str = FILE) -> dict[str, dict] | None:
    """The run's measurements by setting label (None before ``measure``)."""
    path = Path(run_dir) / file
    if not path.exists():
        return None
    return {row["setting"]: row for row in json.loads(path.read_text("utf-8"))}


def _mean(values) -> float:
    return sum(values) / len(values) if values else 0.0


def judge(c) -> list[Check]:
    runs = [r for v in c.variants for r in v.runs]
    if not runs:
        return [Check("A model was trained to sample from", FAILS, "No run finished.")]
    tables = [table(r.run_dir) for r in runs]
    repeats = [table(r.run_dir, REPEAT_FILE) for r in runs]
    if None in tables or None in repeats:
        missing = FILE if None in tables else REPEAT_FILE
        return [Check("Every run was sampled", FAILS, f"No {missing} in a run folder; write "
                      "the page again (tfstudio compare --report DIR) to sample it.")]
    missing = [s.label for s in (LOW, MID, HIGH, TOP_K, TOP_P) if s.label not in tables[0]]
    missing += [s.label for s in REPEAT_GRID if s.label not in repeats[0]]
    if missing:
        return [Check("Every setting was sampled", FAILS, f"Missing: {', '.join(missing)}.")]
    return judge_tables(tables, repeats)


def judge_tables(tables: list[dict[str, dict]], repeats: list[dict[str, dict]]
                 ) -> list[Check]:
    """The checks from one measurement table per seed (setting label -> row) and one table of
    long texts per seed (REPEAT_GRID). Settings are compared seed by seed (paired t): each
    seed's model is sampled at every setting."""
    def each(rows, setting: Setting, measure) -> Sample:
        return Sample.of([measure(t[setting.label]) for t in rows])

    rep = {s: each(repeats, s, lambda row: _mean(row["char_repetition"])) for s in REPEAT_GRID}
    chars = min(len(text) for t in repeats for row in t.values() for text in row["texts"])
    known = {s: each(tables, s, lambda row: _mean(row["known"])) for s in (MID, HIGH)}
    cool, greedy = (higher(rep[s], rep[MID], paired=True).named(
        f"{'greedy' if s.temperature == 0 else s.label} against {MID.label}")
        for s in (COOL, GREEDY))
    drifts = lower(known[HIGH], known[MID], paired=True)
    span = {s: each(tables, s, lambda row: row["kept_max"] / max(row["kept_min"], 1))
            for s in (TOP_K, TOP_P)}
    adapts = higher(span[TOP_P], ADAPTS, digits=2)
    ranges = {s: (min(t[s.label]["kept_min"] for t in tables),
                  max(t[s.label]["kept_max"] for t in tables)) for s in (TOP_K, TOP_P)}
    words = {HOLDS: "as claimed", FAILS: "the other way round",
             UNDECIDED: "not separated by the test"}
    shown = ", ".join(f"{'greedy' if s.temperature == 0 else s.label} {rep[s].text()}"
                      for s in REPEAT_GRID)
    repeats_outcome = both(cool, greedy)
    texts = len(repeats[0][MID.label]["texts"])
    return [
        Check("A low temperature repeats itself", repeats_outcome,
              f"Share of character 8-grams repeated within a text ({texts} texts per seed and "
              f"setting, {chars} characters or more each): "
              f"{shown}: {words[repeats_outcome]}.", tests=(cool, greedy)),
        Check("A high temperature drifts away from the corpus", drifts,
              f"Share of words found in the corpus: {HIGH.label} {known[HIGH].text()}, "
              f"{MID.label} {known[MID].text()}: {words[drifts.outcome]}.", tests=(drifts,)),
        Check("Top-p adapts: its kept count spans a factor of "
              f"{ADAPTS:g} or more", adapts,
              f"Tokens kept per step: {TOP_P.label}: {ranges[TOP_P][0]} to {ranges[TOP_P][1]} "
              f"(largest over smallest {span[TOP_P].text(1)}, tested against x{ADAPTS:g}): "
              f"{words[adapts.outcome]}.", tests=(adapts,)),
        # top-k keeps k wherever it is: true by construction
        fact("Top-k keeps the same count at every step", ranges[TOP_K][0] == ranges[TOP_K][1],
             f"{TOP_K.label}: {ranges[TOP_K][0]} to {ranges[TOP_K][1]} tokens kept per step "
             f"(largest over smallest {span[TOP_K].text(1)})."),
    ]


def grid_table(tables: list[dict[str, dict]]) -> tuple[list[str], list[list[str]]]:
    """Every setting of the grid as a row: each measure's mean over seeds ± its spread."""
    header = ["temperature", "top-k", "top-p", "distinct-1", "distinct-2",
              "repeated 4-grams", "words in the corpus", "mean log-prob", "tokens kept per step"]
    rows = []
    for label, first in tables[0].items():
        here = [t[label] for t in tables if label in t]

        def cell(measure, digits=3):
            return Sample.of([measure(row) for row in here]).text(digits).replace(" (1 seed)", "")
        rows.append([f"{first['temperature']:g}" + (" (greedy)" if first["temperature"] == 0
                                                      else ""),
                     str(first["top_k"]) if first["top_k"] else "off",
                     f"{first['top_p']:g}" if first["top_p"] < 1 else "off",
                     cell(lambda r: r["distinct_1"]), cell(lambda r: r["distinct_2"]),
                     cell(lambda r: _mean(r["repetition"])), cell(lambda r: _mean(r["known"])),
                     cell(lambda r: _mean(r["log_prob"]), 2),
                     f"{min(r['kept_min'] for r in here)} to {max(r['kept_max'] for r in here)}"])
    return header, rows


def tables(c) -> list:
    found = [table(r.run_dir) for v in c.variants for r in v.runs]
    if not found or None in found:
        return []
    header, rows = grid_table(found)
    return [(f"The whole grid: temperature x top-k x top-p ({len(rows)} settings; mean over "
             f"{len(found)} seed(s) ± spread; {SAMPLES} texts of {NEW_TOKENS} tokens per prompt "
             f"and setting, prompts {', '.join(repr(p) for p in PROMPTS)})", header, rows)]


register(Lesson(
    "sampling", "Lesson: temperature, top-k and top-p", CLAIM,
    "project seed, sampling (temperature, top-k, top-p)", "tiny-gpt", [], LESSON_TRAINING,
    judge, measure=measure, tables=tables))
