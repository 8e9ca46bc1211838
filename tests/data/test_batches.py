"""Token cache, train/val split, the resumable window sampler and masked-LM masking."""
import json

import numpy as np
import pytest
import torch

from tfstudio.data import DataError, WindowSampler, build_tokenizer
from tfstudio.data import corpus as corpus_module
from tfstudio.data import (eval_windows, load_corpus, mask_tokens, mlm_batch, split_train_val,
                           textio, token_array, token_cache)
from tfstudio.data.simple_tokenizers import CharTokenizer
from tfstudio.data.token_cache import token_dtype


pytestmark = pytest.mark.usefixtures("private_caches")


def _large_text(n_bytes):
    from pydoc_data.topics import topics
    prose = "\n\n".join(topics[k] for k in sorted(topics))
    extra = " Ünïcödé 日本語テキスト 👍🏽 naïve café\n"
    out, size = [], 0
    while size < n_bytes:
        out.append(prose + extra)
        size += len(out[-1].encode())
    return "".join(out)


@pytest.mark.slow
def test_large_file_streams_in_chunks_and_equals_in_memory(tmp_path, monkeypatch):
    text = _large_text(3_000_000)
    path = tmp_path / "big.txt"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(textio, "CHUNK_BYTES", 1 << 16)
    monkeypatch.setattr(token_cache, "ENCODE_CHARS", 100_000)
    chunk_sizes = []
    real_reader = corpus_module.read_text_chunks

    def observed(*args, **kwargs):
        for chunk in real_reader(*args, **kwargs):
            chunk_sizes.append(len(chunk.encode()))
            yield chunk
    monkeypatch.setattr(corpus_module, "read_text_chunks", observed)

    corpus = load_corpus(str(path))
    for spec in ("byte", "char", "bpe:2048"):
        tok = build_tokenizer(spec, corpus)
        chunk_sizes.clear()
        cached = token_array(corpus, tok)
        assert isinstance(cached, np.memmap) and cached.dtype == np.uint16
        assert len(chunk_sizes) >= path.stat().st_size // (1 << 16)
        assert max(chunk_sizes) <= (1 << 16) + 3  # a split character may carry 3 bytes over
        expected = tok.encode(text) + [tok.eot_id]
        assert len(cached) == len(expected)
        assert np.array_equal(cached, np.asarray(expected)), spec
    # the sampler reads windows straight from the memmap
    x, y = WindowSampler(cached, context=16, batch_size=4, seed=0).next_batch()
    for row in range(4):
        start = WindowSampler(cached, 16, 4, seed=0).starts(0)[row]
        assert x[row].tolist() == expected[start:start + 16]
        assert y[row].tolist() == expected[start + 1:start + 17]


def test_cache_is_keyed_by_content_and_reused(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("first version of the notes\n" * 100)
    tok = build_tokenizer("byte")
    first = token_array(load_corpus(str(path)), tok)
    entries = list((tmp_path / "cache" / "tokens").glob("*.bin"))
    assert len(entries) == 1
    copy = tmp_path / "copy.txt"
    copy.write_text(path.read_text())
    assert np.array_equal(token_array(load_corpus(str(copy)), tok), first)
    assert len(list((tmp_path / "cache" / "tokens").glob("*.bin"))) == 1  # same content, hit
    path.write_text("second version of the notes\n" * 100)
    second = token_array(load_corpus(str(path)), tok)
    assert len(list((tmp_path / "cache" / "tokens").glob("*.bin"))) == 2
    assert bytes(second[:-1].astype(np.uint8)) == path.read_bytes()
    assert not list((tmp_path / "cache" / "tokens").glob("*.tmp"))


def test_documents_end_with_eot_and_big_vocabularies_use_uint32(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha")
    (folder / "b.jsonl").write_text('{"text": "beta"}\n{"text": "gamma"}\n')
    tok = build_tokenizer("byte")
    ids = token_array(load_corpus(str(folder)), tok).tolist()
    eot = tok.eot_id
    assert ids == list(b"alpha") + [eot] + list(b"beta") + [eot] + list(b"gamma") + [eot]

    alphabet = "".join(chr(0x10000 + i) for i in range(70_000))  # > 65,536 distinct ids
    (tmp_path / "wide.txt").write_text(alphabet[::-1])
    wide = load_corpus(str(tmp_path / "wide.txt"))
    char = CharTokenizer(alphabet)
    cached = token_array(wide, char)
    assert char.vocab_size > 65536 and cached.dtype == np.uint32
    assert cached[:-1].tolist() == list(range(69_999, -1, -1))
    assert token_cache.token_dtype(65536) == np.uint16
    assert token_cache.token_dtype(65537) == np.uint32


def test_split_is_last_tenth():
    tokens = np.arange(1000)
    train, val = split_train_val(tokens)
    assert train.tolist() == list(range(900)) and val.tolist() == list(range(900, 1000))
    with pytest.raises(DataError, match="val_fraction"):
        split_train_val(tokens, 1.0)


def test_window_sampler_gives_shifted_windows_and_resumes_exactly():
    tokens = np.arange(10_000, dtype=np.uint16)  # a window's content reveals where it starts
    sampler = WindowSampler(tokens, context=32, batch_size=16, seed=5)
    x, y = sampler.next_batch()
    assert x.dtype == torch.long and x.shape == (16, 32)
    assert torch.equal(y, x + 1)
    assert torch.equal(x - x[:, :1], torch.arange(32).expand(16, 32))
    assert int(x.max()) + 1 <= 9_999  # the last target exists
    for _ in range(4):
        sampler.next_batch()
    state = json.loads(json.dumps(sampler.state_dict()))
    following = [sampler.next_batch()[0] for _ in range(3)]
    resumed = WindowSampler(tokens, context=32, batch_size=16, seed=999)
    resumed.load_state_dict(state)
    for want in following:
        assert torch.equal(resumed.next_batch()[0], want)
    with pytest.raises(DataError, match="cannot resume"):
        WindowSampler(tokens, context=16, batch_size=16).load_state_dict(state)
    with pytest.raises(DataError, match="fewer than context"):
        WindowSampler(tokens[:10], context=32, batch_size=4)
    # starts cover the whole range, not just a corner
    starts = np.concatenate([sampler.starts(k) for k in range(200)])
    assert starts.min() < 200 and starts.max() > 10_000 - 33 - 200


def test_eval_windows_are_fixed():
    tokens = np.arange(5_000)
    first = [x for x, _ in eval_windows(tokens, 64, 8, max_batches=4)]
    second = [x for x, _ in eval_windows(tokens, 64, 8, max_batches=4)]
    assert len(first) == 4 and all(torch.equal(a, b) for a, b in zip(first, second))
    starts = torch.cat([x[:, 0] for x in first])
    assert starts[0] == 0 and starts[-1] == 5_000 - 65


def test_mlm_masking_proportions_and_labels():
    g = torch.Generator().manual_seed(0)
    vocab, mask_id, pad_id = 1000, 1001, 1000
    ids = torch.randint(0, vocab, (256, 512), generator=g)
    ids[:, -16:] = pad_id  # padding must never be chosen
    inputs, labels = mask_tokens(ids, mask_id=mask_id, random_high=vocab,
                                 generator=torch.Generator().manual_seed(1),
                                 protected_ids=[pad_id])
    chosen = labels != -100
    eligible = ids != pad_id
    assert not chosen[~eligible].any()
    assert torch.equal(labels[chosen], ids[chosen])
    assert torch.equal(inputs[~chosen], ids[~chosen])  # only chosen positions change
    n = eligible.sum().item()
    k = chosen.sum().item()
    # binomial bounds at ~5 standard deviations
    p = k / n
    assert abs(p - 0.15) < 5 * (0.15 * 0.85 / n) ** 0.5
    masked = (inputs[chosen] == mask_id).float().mean().item()
    replaced = ((inputs[chosen] != mask_id) & (inputs[chosen] != ids[chosen])).float().mean().item()
    kept = (inputs[chosen] == ids[chosen]).float().mean().item()
    for share, want in ((masked, 0.8), (replaced, 0.1 * (1 - 1 / vocab)),
                        (kept, 0.1 + 0.1 / vocab)):
        assert abs(share - want) < 5 * (want * (1 - want) / k) ** 0.5, (share, want)
    swapped = inputs[chosen & (inputs != mask_id) & (inputs != ids)]
    assert swapped.min() >= 0 and swapped.max() < vocab
    # the same generator seed masks identically
    again, _ = mask_tokens(ids, mask_id=mask_id, random_high=vocab,
                           generator=torch.Generator().manual_seed(1), protected_ids=[pad_id])
    assert torch.equal(again, inputs)


def test_mlm_batch_uses_the_tokenizer_ids():
    tok = build_tokenizer("byte")
    ids = torch.tensor([list(b"hello world, masked language model" * 20) + [tok.eot_id] * 8])
    inputs, labels = mlm_batch(ids, tok, torch.Generator().manual_seed(0))
    assert (inputs == tok.mask_id).any()
    assert (labels[0, -8:] == -100).all()
    changed = inputs != ids
    assert (inputs[changed & (inputs != tok.mask_id)] < 256).all()


# ---------------------------------------------------------------- the edges of each case
def _starts(tokens, context, batch_size, *args):
    """Window starts of eval_windows: with tokens = arange, a window's first input is its start."""
    batches = list(eval_windows(tokens, context, batch_size, *args))
    return [int(s) for x, _ in batches for s in x[:, 0]], [len(x) for x, _ in batches]


def test_eval_windows_default_is_eight_batches():
    starts, sizes = _starts(np.arange(10_000), 4, 2)
    assert sizes == [2] * 8


@pytest.mark.parametrize("n_tokens, context, expected", [
    (21, 4, [0, 4, 8, 12, 16]),        # last start 16: 16 // 4 + 1 = 5 windows, 4 apart
    (22, 4, [0, 4, 8, 12, 17]),        # last start 17: still 5 (17 // 4 + 1), spread to the end
    (6, 1, [0, 1, 2, 3, 4]),           # context 1: every start 0..4
    (5, 4, [0]),                       # exactly one window fits
])
def test_eval_windows_spread_one_context_apart_at_most(n_tokens, context, expected):
    starts, _ = _starts(np.arange(n_tokens), context, 100, 100)
    assert starts == expected


def test_eval_windows_too_short_names_the_validation_split():
    with pytest.raises(DataError, match=r"^the validation split has 4 tokens, fewer than "
                                        r"context \+ 1 = 5; use a shorter context"):
        list(eval_windows(np.arange(4), 4, 1))


def test_sampler_resume_mismatch_names_both_values():
    saved = WindowSampler(np.arange(100), context=8, batch_size=2).state_dict()
    other = WindowSampler(np.arange(100), context=4, batch_size=2)
    with pytest.raises(DataError, match="saved with context=8 but this one has context=4"):
        other.load_state_dict(saved)


def test_iterating_a_sampler_gives_its_next_batches():
    tokens = np.arange(50)
    it = iter(WindowSampler(tokens, context=4, batch_size=3, seed=7))
    twin = WindowSampler(tokens, context=4, batch_size=3, seed=7)
    for _ in range(3):
        (x, y), (x2, y2) = next(it), twin.next_batch()
        assert x.tolist() == x2.tolist() and y.tolist() == y2.tolist()


def test_token_dtype_switches_above_65536_ids():
    assert token_dtype(256) == np.uint16 and token_dtype(65_536) == np.uint16
    assert token_dtype(65_537) == np.uint32


@pytest.mark.parametrize("n, fraction, n_val", [(10, 0.25, 2), (10, 0.35, 4), (10, 0.0, 0),
                                                (7, 0.5, 4), (100, 0.1, 10)])
def test_validation_is_the_rounded_last_fraction(n, fraction, n_val):
    train, val = split_train_val(np.arange(n), fraction)   # Python's round: 2.5 -> 2, 3.5 -> 4
    assert val.tolist() == list(range(n - n_val, n)) and train.tolist() == list(range(n - n_val))


@pytest.mark.parametrize("fraction", [1.0, -0.1, 1.5])
def test_validation_fraction_outside_zero_one_is_refused(fraction):
    with pytest.raises(DataError, match=rf"^val_fraction must be in \[0, 1\), got {fraction}$"):
        split_train_val(np.arange(10), fraction)


def test_default_validation_fraction_is_ten_percent():
    assert len(split_train_val(np.arange(1000))[1]) == 100


def test_iterating_a_window_sampler_gives_its_next_batches():
    tokens = np.arange(500, dtype=np.int64)
    a, b = WindowSampler(tokens, 8, 4, seed=3), WindowSampler(tokens, 8, 4, seed=3)
    first, second = next(iter(a)), next(iter(a))
    for got, want in ((first, b.next_batch()), (second, b.next_batch())):
        assert all(np.array_equal(np.asarray(g), np.asarray(w)) for g, w in zip(got, want))


def test_window_sampler_defaults_seed_0_and_the_train_split(tmp_path):
    tokens = np.arange(100, dtype=np.int64)
    s = WindowSampler(tokens, 8, 4)
    want = np.random.default_rng([0, 0]).integers(0, 100 - 8, size=4)
    assert np.array_equal(s.starts(0), want)
    with pytest.raises(DataError, match=r"^the train split has 5 tokens"):
        WindowSampler(tokens[:5], 8, 4)
    with pytest.raises(DataError, match=r"^the validation split has 5 tokens"):
        WindowSampler(tokens[:5], 8, 4, split="validation")


def test_window_sampler_takes_batch_size_1_and_names_a_bad_one():
    s = WindowSampler(np.arange(20, dtype=np.int64), 4, 1)
    x, _ = s.next_batch()
    assert tuple(x.shape) == (1, 4)
    with pytest.raises(DataError, match=r"^batch size must be at least 1, got 0$"):
        WindowSampler(np.arange(20, dtype=np.int64), 4, 0)
    with pytest.raises(DataError, match=r"^context length must be at least 1, got 0$"):
        WindowSampler(np.arange(20, dtype=np.int64), 0, 2)


def test_window_sampler_steps_one_batch_at_a_time_and_can_start_at_0():
    tokens = np.arange(50, dtype=np.int64)
    s = WindowSampler(tokens, 8, 2, seed=7)
    for k in range(3):
        x, _ = s.next_batch()
        assert s.step == k + 1
        starts = np.random.default_rng([7, k]).integers(0, 42, size=2)
        assert np.array_equal(x[:, 0].numpy(), tokens[starts])
    only = WindowSampler(np.arange(9, dtype=np.int64), 8, 3)  # one full window: start 0
    x, y = only.next_batch()
    assert x.tolist() == [list(range(8))] * 3 and y.tolist() == [list(range(1, 9))] * 3
