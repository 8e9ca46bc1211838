"""Tokenizers: round trips over hard Unicode, BPE against rustbpe itself, the BPE cache, named
tiktoken encodings from local files only (and the message when they are missing)."""
import base64
import hashlib
import json
import random

import pytest
import rustbpe
from gpt2_bytes import gpt2_bytes_to_unicode

from tfstudio.data import DataError, build_tokenizer, load_corpus, load_tokenizer
from tfstudio.data import bpe as bpe_module
from tfstudio.data import named_encodings
from tfstudio.data.bpe import SPLIT_PATTERN
from tfstudio.data.named_encodings import NAMED_ENCODINGS, NamedEncoding, SourceFile
from tfstudio.data.simple_tokenizers import CharTokenizer
from tfstudio.data.tokenizer import SPECIAL_TOKENS

HARD_TEXTS = [
    "plain ASCII, with punctuation!?",
    "emoji 👍🏽 family 👨‍👩‍👧 flags 🇫🇷",
    "CJK 日本語のテキスト 中文 한국어",
    "combining: e\u0301 a\u0308 n\u0303 (decomposed) and é (composed)",
    "NUL \x00 inside, tabs\tand\r\nCRLF, and \x7f",
    "<|endoftext|> is just text here",
    "  leading and trailing spaces  \n\n\n",
    "",
]


def _random_unicode(rng: random.Random, n: int) -> str:
    out = []
    while len(out) < n:
        cp = rng.choice([rng.randrange(0, 0x80), rng.randrange(0x80, 0x800),
                         rng.randrange(0x800, 0x10000), rng.randrange(0x10000, 0x110000)])
        if not 0xD800 <= cp <= 0xDFFF:  # surrogates are not characters
            out.append(chr(cp))
    return "".join(out)


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))


@pytest.fixture(scope="module")
def pydoc():
    return load_corpus("pydoc")


def test_byte_tokenizer_round_trips_and_ids_are_utf8_bytes():
    tok = build_tokenizer("byte")
    rng = random.Random(1)
    for text in HARD_TEXTS + [_random_unicode(rng, 300) for _ in range(20)]:
        ids = tok.encode(text)
        assert ids == list(text.encode("utf-8"))
        assert tok.decode(ids) == text
    assert tok.vocab_size == 256 + len(SPECIAL_TOKENS)
    assert tok.decode([tok.eot_id]) == "<|endoftext|>"
    assert len(set(tok.specials.values())) == len(SPECIAL_TOKENS)
    assert min(tok.specials.values()) == 256


def test_char_tokenizer_round_trips_its_alphabet_and_maps_unknowns_to_unk():
    rng = random.Random(2)
    texts = HARD_TEXTS + [_random_unicode(rng, 200) for _ in range(10)]
    tok = CharTokenizer("".join(texts))
    for text in texts:
        ids = tok.encode(text)
        assert len(ids) == len(text)  # one id per code point
        assert tok.decode(ids) == text
    # documented: unknown characters encode as <|unk|> and decode as U+FFFD, one each
    unknown = "".join(c for c in "ΩЖ€" if c not in tok.alphabet)
    text = "a" + unknown + "b" if "a" in tok.alphabet and "b" in tok.alphabet else unknown
    ids = tok.encode(text)
    assert ids.count(tok.unk_id) == len(unknown) > 0
    assert tok.decode(ids) == text.translate({ord(c): "\ufffd" for c in unknown})


def test_char_tokenizer_built_from_corpus_alphabet():
    corpus = load_corpus("task:reverse")
    tok = build_tokenizer("char", corpus)
    assert tok.alphabet == "".join(sorted(set("abcdefgh>\n")))
    assert tok.ordinary_vocab_size == 10 and tok.unk_id is not None


def test_bpe_round_trips_unicode_and_compresses_prose(pydoc):
    tok = build_tokenizer("bpe:1024", pydoc)
    rng = random.Random(3)
    for text in HARD_TEXTS + [_random_unicode(rng, 300) for _ in range(20)]:
        assert tok.decode(tok.encode(text)) == text
    prose = pydoc.text()
    n_bytes = len(prose.encode())
    n_tokens = len(tok.encode(prose))
    assert n_tokens < 0.5 * n_bytes  # a 1k vocabulary at least halves English prose
    assert tok.vocab_size == 1024 and all(i >= 1020 for i in tok.specials.values())


def test_bpe_matches_rustbpe_trained_directly(pydoc):
    """Our pipeline (chunked training text, tiktoken encoding) agrees with plain rustbpe."""
    from pydoc_data.topics import topics
    ours = build_tokenizer("bpe:700", pydoc)
    reference = rustbpe.Tokenizer()
    reference.train_from_iterator(iter([topics[k] for k in sorted(topics)]), 700 - 4,
                                  pattern=SPLIT_PATTERN)
    ref_ranks = {bytes(t): r for t, r in reference.get_mergeable_ranks()}
    our_ranks = {base64.b64decode(t): r for r, t in enumerate(ours.to_dict()["ranks"])}
    assert our_ranks == ref_ranks
    sample = pydoc.text()[:50_000] + HARD_TEXTS[1] + HARD_TEXTS[2]
    assert ours.encode(sample) == reference.encode(sample)


class _NoTraining:
    class Tokenizer:
        def __init__(self):
            raise AssertionError("BPE was retrained although the cache holds this table")


def test_bpe_cache_hit_returns_same_merges_without_retraining(pydoc, tmp_path, monkeypatch):
    first = build_tokenizer("bpe:600", pydoc)
    cached = list((tmp_path / "cache" / "bpe").glob("*.json"))
    assert len(cached) == 1 and "-v600-" in cached[0].name
    monkeypatch.setattr(bpe_module, "rustbpe", _NoTraining)
    second = build_tokenizer("bpe:600", pydoc)
    assert second.to_dict()["ranks"] == first.to_dict()["ranks"]
    assert second.fingerprint == first.fingerprint
    with pytest.raises(AssertionError, match="retrained"):  # another size is a miss
        build_tokenizer("bpe:601", pydoc)


def test_bpe_vocab_size_is_validated(pydoc):
    with pytest.raises(DataError, match="at least 260"):
        build_tokenizer("bpe:100", pydoc)
    with pytest.raises(DataError, match="integer"):
        build_tokenizer("bpe:big", pydoc)
    with pytest.raises(DataError, match="corpus"):
        build_tokenizer("bpe:512")
    with pytest.raises(DataError, match="unknown tokenizer"):
        build_tokenizer("wordpiece")


def test_save_and_load_reproduce_every_kind(pydoc, tmp_path):
    text = pydoc.text()[:5000] + "".join(HARD_TEXTS)
    for spec in ("byte", "char", "bpe:512"):
        tok = build_tokenizer(spec, pydoc)
        run = tmp_path / f"run-{spec.replace(':', '-')}"
        tok.save(run)
        if spec.startswith("bpe"):  # a run decodes without the cache
            for f in (tmp_path / "cache" / "bpe").glob("*"):
                f.unlink()
        again = load_tokenizer(run)
        assert again.fingerprint == tok.fingerprint
        assert again.encode(text) == tok.encode(text)
        assert again.decode(tok.encode(text)) == tok.decode(tok.encode(text))
        assert again.specials == tok.specials
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "tokenizer.json").write_text(json.dumps({"format_version": 1,
                                                                 "kind": "char"}))
    with pytest.raises(DataError, match="malformed char tokenizer"):
        load_tokenizer(tmp_path / "bad")
    with pytest.raises(DataError, match="no tokenizer saved"):
        load_tokenizer(tmp_path / "nowhere")


def test_token_strings_show_partial_utf8_escaped():
    tok = build_tokenizer("byte")
    ids = tok.encode("aé") + [tok.eot_id]
    assert tok.token_strings(ids) == ["a", "\\xc3", "\\xa9", "<|endoftext|>"]
    with pytest.raises(DataError, match="outside"):
        tok.decode([tok.vocab_size])


# -- named tiktoken encodings ------------------------------------------------------------------
def _no_network(monkeypatch):
    import tiktoken.load

    def refuse(*a, **k):
        raise AssertionError("network access attempted")
    monkeypatch.setattr(tiktoken.load, "read_file", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file_cached", refuse)


def test_missing_named_encoding_says_what_to_copy_where(monkeypatch, tmp_path):
    _no_network(monkeypatch)
    with pytest.raises(DataError) as info:
        build_tokenizer("tiktoken:gpt2")
    message = str(info.value)
    for needed in ("'gpt2'", "vocab.bpe", "encoder.json", "never downloads",
                   "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
                   str(tmp_path / "cache" / "tiktoken"), "TIKTOKEN_CACHE_DIR"):
        assert needed in message
    with pytest.raises(DataError, match="available names: gpt2"):
        build_tokenizer("tiktoken:nope")


def test_corrupt_named_encoding_file_is_reported(monkeypatch, tmp_path):
    _no_network(monkeypatch)
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    bad = tmp_path / "tiktoken-cache" / hashlib.sha1(url.encode()).hexdigest()
    bad.parent.mkdir()
    bad.write_bytes(b"half a download")
    with pytest.raises(DataError, match="sha256 differs") as info:
        build_tokenizer("tiktoken:cl100k_base")
    assert str(bad) in str(info.value)


def test_named_encoding_loads_from_local_tiktoken_file(pydoc, monkeypatch, tmp_path):
    """A registered encoding whose file sits in tiktoken's cache loads without any network,
    parses exactly as tiktoken's own loader parses it, and encodes with those ranks."""
    _no_network(monkeypatch)
    trained = build_tokenizer("bpe:512", pydoc)
    lines = [f"{token} {rank}" for rank, token in enumerate(trained.to_dict()["ranks"])]
    data = ("\n".join(lines) + "\n").encode()
    url = "https://example.invalid/encodings/fake.tiktoken"
    monkeypatch.setitem(NAMED_ENCODINGS, "fake", NamedEncoding(
        (SourceFile(url, hashlib.sha256(data).hexdigest()),), SPLIT_PATTERN,
        {"<|endoftext|>": 508}))
    for where in (tmp_path / "tiktoken-cache" / hashlib.sha1(url.encode()).hexdigest(),
                  tmp_path / "cache" / "tiktoken" / "fake.tiktoken"):
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_bytes(data)
        tok = build_tokenizer("tiktoken:fake")
        where.unlink()
        text = pydoc.text()[:20_000] + "".join(HARD_TEXTS)
        assert tok.encode(text) == trained.encode(text)
        assert tok.decode(tok.encode(text)) == text
        assert tok.eot_id == 508
        assert [tok.pad_id, tok.mask_id, tok.bos_id] == [509, 510, 511]
        assert tok.vocab_size == 512



def test_tiktoken_file_parser_matches_tiktoken(pydoc, tmp_path, monkeypatch):
    import tiktoken.load
    trained = build_tokenizer("bpe:300", pydoc)
    data = "".join(f"{t} {r}\n" for r, t in enumerate(trained.to_dict()["ranks"])).encode()
    local = tmp_path / "fake.tiktoken"
    local.write_bytes(data)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read the local path, cache nothing
    assert named_encodings._tiktoken_ranks(data) == tiktoken.load.load_tiktoken_bpe(str(local))


def test_gpt2_data_gym_parser_matches_tiktoken(pydoc, tmp_path, monkeypatch):
    """GPT-2's original vocab.bpe + encoder.json format, written with GPT-2's own byte table,
    parses to the same ranks with our parser and with tiktoken's."""
    trained = build_tokenizer("bpe:400", pydoc)
    tokens = [base64.b64decode(t) for t in trained.to_dict()["ranks"]]
    to_unicode = gpt2_bytes_to_unicode()
    show = lambda bs: "".join(to_unicode[b] for b in bs)  # noqa: E731
    byte_order = list(to_unicode)  # GPT-2's single-byte ids follow this table's order
    merges, encoder = [], {show(bytes((b,))): i for i, b in enumerate(byte_order)}
    for token in tokens[256:]:
        # any split into two known tokens is a valid merge record for this check
        split = next(i for i in range(1, len(token)) if token[:i] in tokens and token[i:] in
                     tokens)
        merges.append(f"{show(token[:split])} {show(token[split:])}")
        encoder[show(token)] = len(encoder)
    vocab_bpe = ("#version: 0.2\n" + "\n".join(merges) + "\n").encode()
    encoder_json = json.dumps(encoder).encode()

    ours = named_encodings._data_gym_ranks(vocab_bpe, encoder_json)
    import tiktoken.load
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    (tmp_path / "vocab.bpe").write_bytes(vocab_bpe)
    (tmp_path / "encoder.json").write_bytes(encoder_json)
    theirs = tiktoken.load.data_gym_to_mergeable_bpe_ranks(str(tmp_path / "vocab.bpe"),
                                                          str(tmp_path / "encoder.json"))
    assert ours == theirs
    assert set(ours) == set(tokens)
