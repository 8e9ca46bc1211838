"""Static against contextual vectors (word2vec -> ELMo): one model trained as usual, then the
same words followed through its layers in different sentences of the corpus
(``experiments.course.vectors``) by the lesson's ``measure`` step, kept in each run's folder
(vectors.json).

It trains on words (``word:N``, the corpus's commonest words with their space), as word2vec
did: each word is one token, so its input vector is one row of the table wherever it stands.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from ...runs.disk import write_whole
from ..course.vectors import contextual_drift, static_neighbours
from . import register
from .lesson import FAILS, HOLDS, UNDECIDED, Check, Lesson, Sample, fact, higher, lower
from .measures import unmeasured
from .training import LESSON_TRAINING

# every word of the stories sample (228 pieces) gets its own id; a larger corpus keeps 2,000
TRAINING = {**LESSON_TRAINING, "tokenizer": "word:2000"}

CLAIM = ("an input vector is static, one per token wherever it stands (word2vec); a "
         "transformer's hidden vectors are contextual: the same word's vectors drift apart "
         "layer by layer with its sentence (ELMo), while staying closer to each other than to "
         "other words'.")
FILE = "vectors.json"
WORDS, SENTENCES, LENGTH = 4, 8, 60   # words followed, sentences each, characters at most
STATIC = 1e-9                          # a distance below this is no distance
DRIFT = 1e-3                           # a drift (mean 1 - cos) below this is too small to call


def pick(text: str, words: int = WORDS, sentences: int = SENTENCES, length: int = LENGTH
         ) -> tuple[list[str], list[str]]:
    """(words, sentences): the commonest words of four letters or more in ``text``'s first
    sentences that fit ``length`` characters, and for each up to ``sentences`` of them."""
    pool = [s.strip() + "." for s in re.split(r"[.!?]\s+", text[:200_000])
            if 20 <= len(s.strip()) < length]
    counts = Counter(w for s in pool for w in set(re.findall(r"\b[a-z]{4,}\b", s)))
    chosen = [w for w, n in counts.most_common() if n >= 2][:words]
    texts = []
    for w in chosen:
        texts += [s for s in pool if re.search(rf"\b{w}\b", s)][:sentences]
    return chosen, list(dict.fromkeys(texts))


def measure(c, progress=lambda line: None) -> None:
    """Follow the words through every run's layers, unless its vectors.json exists."""
    from ...data import load_corpus
    from ...runs import RunFolder

    for run, path in unmeasured(c, FILE):
        progress(f"following words through {run.run_dir}")
        folder = RunFolder(run.run_dir)
        config = folder.config()
        model, tokenizer = folder.load_model(), folder.tokenizer()
        words, texts = pick(load_corpus(config.corpus, errors=config.corpus_errors).text())
        words = [w for w in words if len(tokenizer.encode(" " + w)) == 1]  # one token each
        drift = contextual_drift(model, tokenizer, texts, words)
        near = static_neighbours(model, tokenizer, [" " + w for w in words], k=3)
        result = {"layers": drift.layers, "same_word": drift.same_word,
                  "between_words": drift.between_words, "same_position": drift.same_position,
                  "words": words, "sentences": len(texts),
                  "neighbours": {t: [[n, c] for n, c in near[t]] for t in near}}
        write_whole(path, json.dumps(result, indent=1))


def judge(c) -> list[Check]:
    runs = [r for v in c.variants for r in v.runs]
    if not runs:
        return [Check("A model was trained to look inside", FAILS, "No run finished.")]
    paths = [Path(r.run_dir) / FILE for r in runs]
    if not all(p.exists() for p in paths):
        return [Check("Every run was measured", FAILS, f"No {FILE} in a run folder; write the "
                      "page again (tfstudio compare --report DIR) to measure it.")]
    return judge_tables([json.loads(p.read_text("utf-8")) for p in paths])


def judge_tables(tables: list[dict]) -> list[Check]:
    """The checks from one drift table per seed."""
    def at(key: str, layer: int) -> Sample:
        return Sample.of([t[key][layer] for t in tables])

    first = tables[0]
    static = max(t["same_word"][0] for t in tables)
    entry, last = at("same_word", 1), at("same_word", -1)
    held_entry, held_last = at("same_position", 1), at("same_position", -1)
    between = at("between_words", -1)
    near = "; ".join(f"'{t}': " + ", ".join(f"'{n}' {c:.2f}" for n, c in ns)
                     for t, ns in first["neighbours"].items())
    # each seed's model measured at both layers: paired by seed
    drift_test = higher(held_last, held_entry, paired=True, digits=4)
    itself = lower(last, between, paired=True, digits=4)
    context, why = drift_test.outcome, ""
    if context == HOLDS and held_last.mean < DRIFT:
        context, why = UNDECIDED, f"the drift {held_last.mean:.2g} is below {DRIFT:g}"
    layers = first["layers"]
    held = [at("same_position", i).mean for i in range(1, len(layers))]
    rising = all(b >= a for a, b in zip(held, held[1:]))
    words = {HOLDS: "as claimed", FAILS: "the other way round",
             UNDECIDED: why or "not separated by the test"}
    if context == HOLDS and not rising:   # apart at the end, but not layer by layer
        context, why = UNDECIDED, "apart at the end, but not rising at every layer"
        words = {**words, UNDECIDED: why}
    steps = ", ".join(f"{name} {x:.4f}" for name, x in zip(layers[1:], held))
    return [
        # one row per token: the input vector is static by construction
        fact("The input vector is static", static < STATIC,
              f"Mean cosine distance between the occurrences of {', '.join(first['words'])} "
              f"({first['sentences']} sentences) at the {layers[0]}: {static:.2g} (the table "
              f"has one row per token). Nearest rows by cosine: {near}."),
        Check("Hidden vectors drift apart layer by layer with the context", context,
              f"Same word held at one position, different sentences: {held_last.text(4)} "
              f"after {layers[-1]}, against {held_entry.text(4)} at {layers[1]}: "
              f"{words[context]} (layer by layer: {steps}). Where the positions differ too: "
              f"{last.text(4)} after {layers[-1]}, {entry.text(4)} at {layers[1]} (the "
              "position table's part).", tests=(drift_test,), why=why),
        Check("A word stays closer to itself than to other words", itself,
              f"After {layers[-1]}: same word {last.text(4)}, different words "
              f"{between.text(4)}: " + {HOLDS: "as claimed", FAILS: "the other way round",
                                        UNDECIDED: "not separated by the test"}[itself.outcome]
              + ".", tests=(itself,)),
    ]

register(Lesson(
    "vectors", "Lesson: static against contextual vectors", CLAIM,
    "project seed 002, word2vec to ELMo", "tiny-gpt", [], TRAINING, judge,
    measure=measure))
