"""The sampling lesson's measurements against values worked out by hand."""
from __future__ import annotations
import math

import numpy as np
import pytest
import torch

from tfstudio.experiments.course.sampling import (Setting, distinct_n, kept_counts,
                                                  known_share, mean_log_prob, measure_texts,
                                                  repetition_rate, sample_table, token_logits,
                                                  words)
from tfstudio.nn import DecodingCache
import itertools
import json
from pathlib import Path
from tfstudio.experiments.course.sampling import (DEFAULT_GRID, TEMPERATURES, TOP_KS, TOP_PS,
                                                  Setting)
from tfstudio.experiments.lessons import LESSONS
from tfstudio.experiments.lessons import sampling as lesson
from tfstudio.experiments.report import lesson_tables, markdown
from tfstudio.experiments.results import Comparison, RunResult, VariantResult
from tfstudio.experiments.runner import Plan


def test_words_are_lower_cased_runs_of_letters():
    assert words("The cat's 2 hats, THE END.") == ["the", "cat", "s", "hats", "the", "end"]


def test_distinct_n_pools_texts_without_crossing_them():
    a, b = ["the", "cat", "the", "cat"], ["the", "dog"]
    # unigrams: the cat the cat the dog -> {the, cat, dog} = 3 of 6
    assert distinct_n([a, b], 1) == pytest.approx(3 / 6)
    # bigrams: (the cat) (cat the) (the cat) | (the dog) -> 3 distinct of 4; "cat the" from
    # a's end to b's start would be a 5th if texts were joined
    assert distinct_n([a, b], 2) == pytest.approx(3 / 4)
    assert distinct_n([[]], 2) == 0.0


def test_repetition_rate_counts_four_grams_seen_earlier_in_the_text():
    loop = "a b c d a b c d a b".split()      # 7 four-grams, 4 distinct: 3 repeats
    assert repetition_rate(loop) == pytest.approx(3 / 7)
    assert repetition_rate("a b c d e f g".split()) == 0.0
    assert repetition_rate("a b c".split()) == 0.0           # no 4-gram at all
    assert repetition_rate("x x x x x".split(), n=1) == pytest.approx(4 / 5)


def test_known_share_is_the_fraction_of_words_in_the_vocabulary():
    assert known_share(["the", "cat", "zzq", "the"], {"the", "cat"}) == pytest.approx(3 / 4)
    assert known_share([], {"the"}) == 0.0


def test_mean_log_prob_is_the_mean_log_softmax_of_the_chosen_tokens():
    logits = torch.tensor([[0.0, math.log(3.0)], [math.log(4.0), 0.0]])
    # p = [1/4, 3/4] and [4/5, 1/5]; chosen tokens 1 then 1
    expected = (math.log(3 / 4) + math.log(1 / 5)) / 2
    assert mean_log_prob(logits, [1, 1]) == pytest.approx(expected, abs=1e-6)


def test_top_k_keeps_k_everywhere_and_top_p_adapts_to_the_distribution():
    confident = [5.0, 1.0, 0.5, 0.0]                 # p ~ [0.965, 0.018, 0.011, 0.007]
    unsure = [0.3, 0.2, 0.1, 0.0]                    # p ~ [0.289, 0.261, 0.236, 0.214]
    logits = torch.tensor([confident, unsure])
    assert kept_counts(logits, 1.0, 2, 1.0) == [2, 2]
    assert kept_counts(logits, 1.0, 0, 0.9) == [1, 4]   # 0.9 of the flat one needs all four
    assert kept_counts(logits, 0.0, 0, 1.0) == [1, 1]   # greedy


class Bigram(torch.nn.Module):
    """A decoder whose logits for the next token depend only on the current one (a table),
    so the expected logits of any text are known without running a transformer."""
    family, vocab_size = "decoder", 5

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.table = torch.nn.Parameter(torch.randn(5, 5))
        self.seen = []

    def forward(self, ids, cache=None):
        self.seen.append(ids.shape[1])
        return self.table[ids]

    def new_cache(self):  # a bigram table needs nothing from earlier calls
        return DecodingCache()


def test_token_logits_reads_each_token_from_its_predecessor_within_the_window():
    model = Bigram()
    prompt, new = [0, 1], [2, 3, 4, 0, 1, 2, 3]
    logits = token_logits(model, prompt, new, window=4)
    ids = prompt + new
    expected = torch.stack([model.table[ids[j - 1]] for j in range(2, len(ids))])
    assert torch.allclose(logits, expected.detach())
    assert max(model.seen) <= 4                      # never reads more than the window


class Tok:
    def encode(self, text):
        return [ord(c) % 5 for c in text]

    def decode(self, ids):
        return " ".join("abcde"[i] for i in ids)


def test_sample_table_measures_each_setting_on_the_generated_texts():
    model = Bigram()
    grid = [Setting(0.0), Setting(1.0, top_k=2), Setting(1.0, top_p=0.5)]
    rows = sample_table(model, Tok(), {"a", "b"}, prompts=["a"], grid=grid, samples=2,
                        max_new_tokens=12, window=8)
    assert [r.setting for r in rows] == grid
    greedy, top_k, top_p = rows
    assert greedy.texts[0] == greedy.texts[1]                  # greedy ignores the seed
    assert all(k == 2 for k in top_k.kept) and len(top_k.kept) == 2 * 12
    for row in rows:   # each number recomputed from the row's own texts
        split = [words(t) for t in row.texts]
        assert row.distinct_1 == pytest.approx(distinct_n(split, 1))
        assert row.known == [pytest.approx(known_share(w, {"a", "b"})) for w in split]
        assert row.mean_log_prob <= 0.0


def test_measure_texts_flips_with_the_texts():
    loop = measure_texts(Setting(0.0), ["the cat sat the cat sat the cat sat"], {"the", "cat",
                         "sat"}, [-0.5], [1])
    drift = measure_texts(Setting(2.0), ["qz the vv cat xx pp"], {"the", "cat"}, [-3.0], [9])
    assert loop.mean_repetition > drift.mean_repetition
    assert loop.mean_known > drift.mean_known
    assert loop.distinct_1 < drift.distinct_1


def test_repeated_character_8grams_tell_a_cold_sampler_from_a_hot_one():
    """Texts of 600 characters drawn from a character trigram model counted on the stories
    sample at T=0.2 loop and repeat their 8-grams; at T=1.5 they wander and do not."""
    from collections import Counter, defaultdict

    from tfstudio.data import load_corpus
    from tfstudio.experiments.course.sampling import char_repetition

    text = load_corpus("sample").text()[:200_000]
    counts: dict[str, Counter] = defaultdict(Counter)
    for i in range(len(text) - 2):
        counts[text[i:i + 2]][text[i + 2]] += 1
    rng = np.random.default_rng(0)

    def sample(temperature: float) -> str:
        out = "Once upon a time"
        while len(out) < 616:
            nxt = counts[out[-2:]]
            chars, n = list(nxt), np.array(list(nxt.values()), dtype=float)
            p = n ** (1 / temperature)
            out += chars[rng.choice(len(chars), p=p / p.sum())]
        return out[16:]

    cold = [char_repetition(sample(0.2)) for _ in range(4)]
    hot = [char_repetition(sample(1.5)) for _ in range(4)]
    assert min(cold) > max(hot)
    assert char_repetition("abcdefgh" * 10) > 0.8 and char_repetition("abcdefghij") == 0.0


# Moved from test_sampling_grid.py: The sampling lesson walks the whole grid (temperature x top-k x top-p) and shows every
# setting on its page, each measure as its mean over seeds with the spread.
def test_the_grid_holds_every_temperature_with_every_filter_and_greedy():
    combos = {(s.temperature, s.top_k, s.top_p) for s in DEFAULT_GRID}
    assert combos == {(0.0, 0, 1.0)} | set(itertools.product(TEMPERATURES, TOP_KS, TOP_PS))
    assert len(TEMPERATURES) >= 3 and len(TOP_KS) >= 2 and len(TOP_PS) >= 2
    labels = {s.label for s in DEFAULT_GRID}   # the settings the verdict reads are in it
    assert {lesson.LOW.label, lesson.MID.label, lesson.HIGH.label, lesson.TOP_K.label,
            lesson.TOP_P.label} <= labels


def fake_row(setting: Setting, rep: float, kept=(3, 9)) -> dict:
    return {"setting": setting.label, "temperature": setting.temperature,
            "top_k": setting.top_k, "top_p": setting.top_p, "distinct_1": 0.5,
            "distinct_2": 0.8, "repetition": [rep, rep], "known": [0.9], "log_prob": [-1.0],
            "kept_min": kept[0], "kept_max": kept[1], "texts": []}


def test_each_setting_is_a_row_with_the_mean_and_spread_over_seeds():
    grid = [Setting(0.0), Setting(1.0, top_k=5, top_p=0.9)]
    tables = [{s.label: fake_row(s, rep, kept) for s in grid}
              for rep, kept in ((0.1, (1, 4)), (0.3, (2, 7)))]
    header, rows = lesson.grid_table(tables)
    assert header[:3] == ["temperature", "top-k", "top-p"]
    assert rows[0][:3] == ["0 (greedy)", "off", "off"]
    assert rows[1][:3] == ["1", "5", "0.9"]
    assert rows[1][header.index("repeated 4-grams")] == "0.200 ± 0.141"
    assert rows[1][header.index("tokens kept per step")] == "1 to 7"


def test_the_lessons_page_shows_the_grid(tmp_path):
    runs = []
    for seed in (1, 2):
        folder = tmp_path / str(seed)
        folder.mkdir()
        (folder / "sampling.json").write_text(json.dumps(
            [fake_row(s, 0.1 * seed) for s in DEFAULT_GRID]))
        runs.append(RunResult(seed, folder, 1000, [(10, 1.0)], [(10, 1.0)], {}, 1e3))
    plan = Plan("tiny-gpt", [], [1, 2], LESSONS["sampling"].config(), [], [], "sampling")
    c = Comparison(Path(tmp_path), plan, [VariantResult("base", "base", runs, 1.0, 0)], {}, None)
    (title, header, rows), = lesson_tables(c)
    assert len(rows) == len(DEFAULT_GRID) and f"{len(DEFAULT_GRID)} settings" in title
    page = markdown(c, {}, "Lesson", [])
    assert "## The whole grid" in page and "| 2 | 40 | 0.5 |" in page
