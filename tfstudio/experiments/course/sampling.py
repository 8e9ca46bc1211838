"""What temperature, top-k and top-p do to generated text, measured.

Per text, over its words (runs of letters, lower-cased):

    distinct-n        distinct word n-grams / all word n-grams (Li et al. 2016), pooled over
                      the texts of one setting, n-grams never crossing two texts
    repetition        seq-rep-4 (Welleck et al. 2019): the share of a text's word 4-grams that
                      already occurred earlier in it, = 1 - distinct-4 of that text
    char repetition   the same on characters: the share of a text's character 8-grams seen
                      earlier in it (a character model's 100-character texts hold too few
                      words to repeat a word 4-gram; 600 characters at a low temperature do)
    known words       the share of its words found in the training corpus
    log-probability   the mean of log p(token | what came before) under the model itself at
                      temperature 1, unfiltered: how typical of the model the text is
    kept tokens       how many vocabulary entries survive the setting's filters at each step;
                      top-k keeps k wherever it is, top-p as many as the model's confidence needs

Sampling uses ``train.generation.generate_ids`` (the app's own sampler), so the measured texts are
the ones a user would see.
"""
from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Sequence

if TYPE_CHECKING:
    import torch

# torch and the sampler are imported by the functions that run the model, so the settings
# (Setting, DEFAULT_GRID) load without torch: `tfstudio lesson` lists the course without it

WORD = re.compile(r"[a-z]+")


def words(text: str) -> list[str]:
    """The words of ``text``: runs of letters a-z, lower-cased."""
    return WORD.findall(text.lower())


def ngrams(items: Sequence, n: int) -> list[tuple]:
    return [tuple(items[i:i + n]) for i in range(len(items) - n + 1)]


def distinct_n(texts: Iterable[Sequence[str]], n: int) -> float:
    """Distinct n-grams over all n-grams of ``texts`` (lists of words), pooled; n-grams do not
    cross from one text to the next. 0.0 when there are no n-grams."""
    grams = [g for t in texts for g in ngrams(list(t), n)]
    return len(set(grams)) / len(grams) if grams else 0.0


def repetition_rate(text_words: Sequence[str], n: int = 4) -> float:
    """The share of the text's word n-grams that repeat one earlier in it (seq-rep-n)."""
    grams = ngrams(list(text_words), n)
    return 1.0 - len(set(grams)) / len(grams) if grams else 0.0


def char_repetition(text: str, n: int = 8) -> float:
    """The share of ``text``'s character n-grams that repeat one earlier in it."""
    grams = [text[i:i + n] for i in range(len(text) - n + 1)]
    return 1.0 - len(set(grams)) / len(grams) if grams else 0.0


def known_share(text_words: Sequence[str], vocabulary: set[str]) -> float:
    """The share of ``text_words`` found in ``vocabulary``; 0.0 for a text without words."""
    return sum(w in vocabulary for w in text_words) / len(text_words) if text_words else 0.0


def token_logits(model, prompt_ids: list[int], new_ids: list[int],
                 window: int | None = None) -> torch.Tensor:
    """The model's logits [len(new_ids), V] for each new token, each read from at most
    ``window`` tokens before it (the generator's own limit), prompt included."""
    import torch

    ids = list(prompt_ids) + list(new_ids)
    window = window or len(ids)
    start, rows = len(prompt_ids), []
    model.eval()
    with torch.no_grad():
        while start < len(ids):
            # predict tokens start..end-1 from a context ending just before each of them
            end = min(len(ids), start + max(1, window // 2))
            first = max(0, end - 1 - window)
            context = torch.tensor([ids[first:end - 1]], dtype=torch.long)
            logits = model(context)[0]
            rows.append(logits[start - 1 - first:end - 1 - first])
            start = end
        return torch.cat(rows).float() if rows else torch.zeros(0, model.vocab_size)


def mean_log_prob(logits: torch.Tensor, new_ids: Sequence[int]) -> float:
    """Mean log p(token) of ``new_ids`` under ``logits`` [len, V] (natural log)."""
    import torch

    if len(new_ids) == 0:
        return 0.0
    logp = torch.log_softmax(logits.float(), -1)
    return float(logp[torch.arange(len(new_ids)), torch.tensor(list(new_ids))].mean())


def kept_counts(logits: torch.Tensor, temperature: float, top_k: int, top_p: float) -> list[int]:
    """How many tokens survive the filters at each step."""
    import torch

    from ...train.sampling import apply_filters

    if len(logits) == 0:
        return []
    filtered = apply_filters(logits, temperature, top_k, top_p)
    return [int(n) for n in torch.isfinite(filtered).sum(-1).tolist()]


@dataclass(frozen=True)
class Setting:
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0

    @property
    def label(self) -> str:
        parts = [f"T={self.temperature:g}"]
        if self.top_k:
            parts.append(f"top-k {self.top_k}")
        if self.top_p < 1.0:
            parts.append(f"top-p {self.top_p:g}")
        return ", ".join(parts)


# The grid the sampling lesson walks: greedy, then every temperature with every top-k (0: off)
# and every top-p (1: off), so each filter is seen at each temperature
TEMPERATURES, TOP_KS, TOP_PS = (0.5, 1.0, 1.5, 2.0), (0, 5, 40), (1.0, 0.9, 0.5)
DEFAULT_GRID = (Setting(0.0),) + tuple(Setting(t, k, p) for t in TEMPERATURES for k in TOP_KS
                                       for p in TOP_PS)


@dataclass
class SamplingRow:
    """One setting's measurements; the per-text lists give each mean its spread."""
    setting: Setting
    texts: list[str]
    distinct_1: float
    distinct_2: float
    repetition: list[float] = field(default_factory=list)
    known: list[float] = field(default_factory=list)
    log_prob: list[float] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)       # every step of every text
    char_repetition: list[float] = field(default_factory=list)

    @staticmethod
    def _mean(values: Sequence[float]) -> float:
        return statistics.fmean(values) if values else math.nan

    @property
    def mean_repetition(self) -> float:
        return self._mean(self.repetition)

    @property
    def mean_known(self) -> float:
        return self._mean(self.known)

    @property
    def mean_log_prob(self) -> float:
        return self._mean(self.log_prob)

    def as_dict(self) -> dict:
        return {"setting": self.setting.label, "temperature": self.setting.temperature,
                "top_k": self.setting.top_k, "top_p": self.setting.top_p,
                "distinct_1": self.distinct_1, "distinct_2": self.distinct_2,
                "repetition": self.repetition, "known": self.known, "log_prob": self.log_prob,
                "kept_min": min(self.kept, default=0), "kept_max": max(self.kept, default=0),
                "char_repetition": self.char_repetition, "texts": self.texts}


def measure_texts(setting: Setting, texts: list[str], vocabulary: set[str],
                  log_probs: list[float], kept: list[int]) -> SamplingRow:
    """The row for ``texts`` generated at ``setting`` (log-probabilities and kept counts
    already measured)."""
    split = [words(t) for t in texts]
    return SamplingRow(setting, list(texts), distinct_n(split, 1), distinct_n(split, 2),
                       [repetition_rate(w) for w in split],
                       [known_share(w, vocabulary) for w in split], list(log_probs), list(kept),
                       [char_repetition(t) for t in texts])


def sample_table(model, tokenizer, vocabulary: set[str], *, prompts: Sequence[str],
                 grid: Sequence[Setting] = DEFAULT_GRID, samples: int = 3,
                 max_new_tokens: int = 120, seed: int = 0,
                 window: int | None = None) -> list[SamplingRow]:
    """Generate ``samples`` texts per prompt at every setting of ``grid`` and measure them.
    Each (prompt, sample) uses the same seed across settings, so rows differ by the setting."""
    from ...train.generation import context_window, fit_to_window, generate_ids

    window = window or context_window(model)
    rows = []
    for setting in grid:
        texts, log_probs, kept = [], [], []
        for p, prompt in enumerate(prompts):
            prompt_ids = fit_to_window(tokenizer.encode(prompt), window)
            for s in range(samples):
                new = list(generate_ids(model, prompt_ids, max_new_tokens=max_new_tokens,
                                        temperature=setting.temperature, top_k=setting.top_k,
                                        top_p=setting.top_p, seed=seed + 1000 * p + s,
                                        window=window))
                logits = token_logits(model, prompt_ids, new, window)
                texts.append(tokenizer.decode(new))
                log_probs.append(mean_log_prob(logits, new))
                kept += kept_counts(logits, setting.temperature, setting.top_k, setting.top_p)
        rows.append(measure_texts(setting, texts, vocabulary, log_probs, kept))
    return rows


def sample_table_for_run(run_dir, *, prompts: Sequence[str] = ("The ",),
                         grid: Sequence[Setting] = DEFAULT_GRID, samples: int = 3,
                         max_new_tokens: int = 120, seed: int = 0) -> list[SamplingRow]:
    """:func:`sample_table` for a finished run: its latest weights, its tokenizer, and the
    words of the corpus it trained on as the vocabulary."""
    from ...data import load_corpus
    from ...runs import RunFolder

    folder = RunFolder(run_dir)
    config = folder.config()
    corpus = load_corpus(config.corpus, errors=config.corpus_errors)
    if corpus.task is not None:
        raise ValueError(f"{folder.path} trained on the synthetic task {config.corpus!r}, "
                         "which has no words to compare samples with; use a run trained on text")
    model, tokenizer = folder.load_model(), folder.tokenizer()
    return sample_table(model, tokenizer, set(words(corpus.text())), prompts=prompts,
                        grid=grid, samples=samples, max_new_tokens=max_new_tokens, seed=seed,
                        window=folder.trained_length() or None)
