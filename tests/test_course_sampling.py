"""The sampling lesson's measurements against values worked out by hand."""
import math

import numpy as np
import pytest
import torch

from tfstudio.experiments.course.sampling import (Setting, distinct_n, kept_counts,
                                                  known_share, mean_log_prob, measure_texts,
                                                  repetition_rate, sample_table, token_logits,
                                                  words)
from tfstudio.nn import DecodingCache


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
