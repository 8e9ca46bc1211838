"""Token and position vectors, measured for orthogonality (seed 002): learned and sinusoidal
positions are added to the token embeddings, which only keeps both readable if the two sets of
vectors stay out of each other's way. Mean |cos| is set against random vectors of the same
dimension and count (a mean angle near 90 degrees says nothing: any symmetric spread of
cosines gives it), and the share of the position vectors' energy inside the token embeddings'
top-k directions against chance k/d (``probes.embeddings.position_angles``)."""
from __future__ import annotations

import json
from pathlib import Path

from ...graph.kinds import LEARNED, SINUSOIDAL
from ...runs.disk import write_whole
from . import register
from .lesson import FAILS, HOLDS, UNDECIDED, Check, Lesson, Sample, higher
from .measures import unmeasured, variants
from .training import LESSON_TRAINING

KEY, SCHEMES, FILE, K = "positions", (LEARNED, SINUSOIDAL), "orthogonality.json", 8
CLAIM = ("token and position vectors are nearly orthogonal, so their sum keeps both: the model "
         "can read the token and its position back from it.")


def measure(c, progress=lambda line: None) -> None:
    """Every run's token rows against its first seq_len position vectors, unless measured."""
    from ...probes.embeddings import position_angles
    from ...runs import RunFolder

    for run, path in unmeasured(c, FILE):
        progress(f"measuring token and position vectors of {run.run_dir}")
        folder = RunFolder(run.run_dir)
        ids = list(range(folder.tokenizer().ordinary_vocab_size))
        angles = position_angles(folder.load_model(), ids, length=folder.config().seq_len)
        if angles is None:
            continue
        keep = ("scheme", "mean_abs_cosine", "mean_angle_degrees", "random_mean_abs_cosine",
                "random_spread", "subspace")
        write_whole(path, json.dumps({k: angles[k] for k in keep}, indent=1))


def judge(c) -> list[Check]:
    v = variants(c, KEY)
    if not set(SCHEMES) <= set(v):
        return [Check("Learned and sinusoidal positions were trained", FAILS,
                      f"Only {', '.join(sorted(v)) or 'none'} finished.")]
    found = {s: [Path(r.run_dir) / FILE for r in v[s].runs] for s in SCHEMES}
    if not all(p.exists() for paths in found.values() for p in paths):
        return [Check("Every run was measured", FAILS, f"No {FILE} in a run folder; write the "
                      "page again (tfstudio compare --report DIR) to measure it.")]
    return judge_tables({s: [json.loads(p.read_text("utf-8")) for p in paths]
                         for s, paths in found.items()})


def judge_tables(tables: dict[str, list[dict]]) -> list[Check]:
    """Two checks per scheme from its per-seed measurements, each an equivalence test: mean
    |cos| holds when its 95% interval against random vectors' lies within two of the random
    draws' standard deviations, fails when a test puts it above random's; the top-K subspace
    share holds when its interval lies below twice chance, fails when a test puts it above
    that."""
    checks = []
    for scheme, rows in tables.items():
        cos = Sample.of([r["mean_abs_cosine"] for r in rows])
        rand = sum(r["random_mean_abs_cosine"] for r in rows) / len(rows)
        rand_spread = max(r["random_spread"] for r in rows)
        angle = sum(r["mean_angle_degrees"] for r in rows) / len(rows)
        above = higher(cos, rand)
        margin = 2 * rand_spread
        outcome, why = _equivalent(above, margin)
        words = {HOLDS: "no more aligned than random vectors: near orthogonal",
                 FAILS: f"{cos.mean / rand:.1f} times as aligned as random vectors: not "
                        "orthogonal",
                 UNDECIDED: "not shown either way"}[outcome]
        checks.append(Check(
            f"{scheme.capitalize()} position vectors are as near orthogonal to the token "
            "vectors as random vectors", outcome,
            f"Mean |cos| over every token row and position {cos.text()} against "
            f"{rand:.3f} ± {rand_spread:.3f} for random vectors of the same dimension and count "
            f"(mean angle {angle:.1f} degrees, which would read 'orthogonal' either way): "
            f"{words} (holds when the difference's interval ends below two random spreads, "
            f"{margin:.3f}).", tests=(above,), why=why))
        shares = [next((s for s in r["subspace"] if s["k"] == K), None) for r in rows]
        if None in shares:
            continue
        share, chance = Sample.of([s["share"] for s in shares]), shares[0]["chance"]
        above = higher(share, chance)
        outcome, why = _equivalent(above, chance)
        checks.append(Check(
            f"{scheme.capitalize()} positions keep out of the token vectors' main directions",
            outcome,
            f"Share of the position vectors' energy inside the token embeddings' top {K} "
            f"directions: {share.text()} against {chance:.3f} by chance "
            f"({K}/{round(K / chance)}): " +
            {HOLDS: "no more than chance", FAILS: f"{share.mean / chance:.1f} times chance",
             UNDECIDED: "not shown either way"}[outcome] +
            " (holds when the difference's interval ends below chance itself, i.e. the share "
            "below twice chance).", tests=(above,), why=why))
    return checks


def _equivalent(above, margin: float) -> tuple[str, str]:
    """FAILS when the test puts the measure above its reference, HOLDS when the difference's
    95% interval ends below ``margin``, else UNDECIDED (with what left it so)."""
    if above.outcome == HOLDS:
        return FAILS, ""
    if above.tested and above.high < margin:
        return HOLDS, ""
    if not above.tested:
        return UNDECIDED, "one seed: no interval"
    return UNDECIDED, (f"the interval's upper end {above.high:.3f} is not below the margin "
                       f"{margin:.3f}")


register(Lesson(
    "orthogonality", "Lesson: are token and position vectors orthogonal?", CLAIM,
    "project seed 002, adding positions to token embeddings", "tiny-gpt",
    [(KEY, list(SCHEMES))], LESSON_TRAINING, judge, measure=measure))
