"""Tokenizers: round trips over hard Unicode, BPE against rustbpe itself, the BPE cache, named
tiktoken encodings from local files only (and the message when they are missing)."""
import base64
import hashlib
import json
import os
import random
import re
import tempfile

import numpy as np
import pytest
import rustbpe
from gpt2_bytes import gpt2_bytes_to_unicode

from tfstudio.data import DataError
from tfstudio.data import bpe as bpe_module
from tfstudio.data import build_tokenizer, load_corpus, load_tokenizer, named_encodings, token_array
from tfstudio.data.bpe import SPLIT_PATTERN, TiktokenTokenizer
from tfstudio.data.corpus import Corpus
from tfstudio.data.named_encodings import NAMED_ENCODINGS, NamedEncoding, SourceFile, search_dirs
from tfstudio.data.simple_tokenizers import ByteTokenizer, CharTokenizer
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


pytestmark = pytest.mark.usefixtures("private_caches")


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


# ---------------------------------------------------------------- the edges of each case
def test_char_ids_are_positions_in_the_sorted_alphabet_and_the_rest_is_unk():
    tok = CharTokenizer("dbdb")
    assert tok.alphabet == "bd" and tok.ordinary_vocab_size == 2
    unk = 2 + 4                                           # after eot, pad, mask, bos
    assert tok.encode("abcde") == [unk, 0, unk, 1, unk]   # below, between and above the codes
    assert tok.encode_array("db").tolist() == [1, 0]
    assert tok.decode([0, 1, unk, tok.eot_id]) == "bd\ufffd<|endoftext|>"
    assert tok.token_strings([1, tok.bos_id]) == ["d", "<|bos|>"]
    lone = CharTokenizer("a\ud800")                   # a lone surrogate from a decoded file
    assert lone.token_bytes(1) == b"\xed\xa0\x80"
    wide = CharTokenizer("é日")
    assert wide.token_bytes(0) == "é".encode() and wide.token_bytes(1) == "日".encode()
    assert wide.encode("日é") == [1, 0]


def test_empty_alphabets_are_refused_with_a_reason():
    with pytest.raises(ValueError, match="^a character tokenizer needs at least one character$"):
        CharTokenizer("")
    from tfstudio.data.corpus import Corpus
    empty = Corpus("blank", "Blank", "file", "", 0, lambda: iter([iter([""])]))
    with pytest.raises(DataError, match="^corpus 'blank' has no characters to build a "
                                        "character tokenizer from$"):
        CharTokenizer.from_corpus(empty)


def test_byte_tokens_are_bytes_then_named_specials():
    tok = ByteTokenizer()
    assert tok.token_bytes(0) == b"\x00" and tok.token_bytes(255) == b"\xff"
    assert tok.token_bytes(256) == b"<|endoftext|>" and tok.token_bytes(259) == b"<|bos|>"
    assert tok.encode_array("é").tolist() == [0xC3, 0xA9]
    with pytest.raises(DataError, match=r"^token id 260 is outside this tokenizer's vocabulary "
                                        r"\(0\.\.259, byte\)"):
        tok.token_bytes(260)


def test_char_tokenizer_is_named_char_in_its_saved_form_and_messages():
    tok = CharTokenizer("ba")
    assert tok.to_dict() == {"format_version": 1, "kind": "char", "name": "char",
                             "specials": {"<|endoftext|>": 2, "<|pad|>": 3, "<|mask|>": 4,
                                          "<|bos|>": 5, "<|unk|>": 6},
                             "alphabet": "ab"}
    assert repr(tok) == "<CharTokenizer char vocab=7>"
    with pytest.raises(DataError, match=r"^token id 7 is outside this tokenizer's vocabulary "
                                        r"\(0\.\.6, char\)"):
        tok.decode([7])


def test_lone_surrogates_encode_instead_of_failing():
    # a str read with surrogateescape (or built by hand) may hold U+D800 on its own
    byte = ByteTokenizer()
    assert byte.encode("a\ud800") == [0x61, 0xED, 0xA0, 0x80]   # its 3-byte surrogatepass form
    assert byte.encode_array("\ud800a").tolist() == [0xED, 0xA0, 0x80, 0x61]
    assert byte.decode(byte.encode("a\ud800")) == "a\ufffd\ufffd\ufffd"
    char = CharTokenizer("a\ud800")                            # code points 0x61 < 0xD800
    assert char.encode("\ud800a\ud801") == [1, 0, char.unk_id]
    assert char.encode_array("\ud800").tolist() == [1]


def _corpus(*documents):
    """A corpus of documents given as lists of text chunks."""
    return Corpus("hand", "Hand", "file", "", 0, lambda: iter([iter(d) for d in documents]))


def test_token_array_without_the_cache_is_the_same_ids_in_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path))
    corpus, tok = _corpus(["ab", "c"], ["é"]), ByteTokenizer()
    expected = [0x61, 0x62, 0x63, tok.eot_id, 0xC3, 0xA9, tok.eot_id]  # each document + eot
    ids = token_array(corpus, tok, use_cache=False)
    assert not isinstance(ids, np.memmap) and ids.dtype == np.uint16
    assert ids.tolist() == expected
    assert not (tmp_path / "tokens").exists()            # nothing written
    cached = token_array(corpus, tok)
    assert isinstance(cached, np.memmap) and cached.dtype == np.uint16
    assert cached.tolist() == expected
    with pytest.raises(ValueError, match="read-only"):  # documented read-only: runs share it
        cached[0] = 0
    # one entry, named by both fingerprints' first 32 hex digits and the dtype
    assert [p.name for p in (tmp_path / "tokens").iterdir()] == [
        f"{corpus.fingerprint[:32]}-{tok.fingerprint[:32]}-uint16.bin"]


def test_a_corpus_without_text_is_refused_and_leaves_no_cache_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path))
    with pytest.raises(DataError, match=r"^corpus 'hand' contains no text to tokenize; choose "
                                        r"a corpus with some text in it$"):
        token_array(_corpus([""], []), ByteTokenizer())
    assert list((tmp_path / "tokens").iterdir()) == []
    one = token_array(_corpus([""], ["a"]), ByteTokenizer())     # one character is enough
    assert one.tolist() == [256, 0x61, 256]


@pytest.mark.parametrize("spec", ["char", "bpe:512"])
def test_a_corpus_tokenizer_without_a_corpus_names_the_spec(spec):
    with pytest.raises(DataError, match=rf"^tokenizer '{spec}' is built from a corpus; pass one "
                                        r"\(build_tokenizer\(spec, load_corpus\(\.\.\.\)\)\) or "
                                        r'use "byte"$'):
        build_tokenizer(spec)


@pytest.mark.parametrize("spec", ["byte:2", "char:x", "tiktoken", "tiktoken:"])
def test_an_argument_only_tiktoken_takes_is_an_unknown_tokenizer(spec):
    with pytest.raises(DataError, match=rf"^unknown tokenizer '{spec}'; use \"byte\", \"char\""):
        build_tokenizer(spec, _corpus(["ab"]))


def test_bpe_options_reach_the_trainer(tmp_path, monkeypatch):
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path))
    corpus = _corpus(["abab abab cdcd " * 40])
    tok = build_tokenizer("bpe:270", corpus, use_cache=False)
    assert not any((tmp_path / "bpe").iterdir())           # use_cache=False: nothing written
    assert tok.decode(tok.encode("abab cdcd")) == "abab cdcd"
    build_tokenizer("bpe:270", corpus)
    assert len(list((tmp_path / "bpe").iterdir())) == 1     # the default caches the table


BLOB = "https://openaipublic.blob.core.windows.net/"


@pytest.fixture
def caches(tmp_path, monkeypatch):
    """(tiktoken's cache folder, tfstudio's tiktoken folder), both empty."""
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tk"))
    return tmp_path / "tk", tmp_path / "cache" / "tiktoken"


def test_search_dirs_follow_tiktokens_environment_variables(caches, monkeypatch, tmp_path):
    tk, ours = caches
    assert search_dirs() == [tk, ours]
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path / "gym"))
    assert search_dirs() == [tmp_path / "gym", ours]
    monkeypatch.delenv("DATA_GYM_CACHE_DIR")
    assert search_dirs() == [__import__("pathlib").Path(tempfile.gettempdir()) / "data-gym-cache",
                             ours]
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")          # tiktoken's "no cache"
    assert search_dirs() == [ours]


def test_tiktoken_files_are_the_published_urls():
    assert named_encodings._tiktoken_file("cl100k_base", "ab12") == (
        SourceFile(BLOB + "encodings/cl100k_base.tiktoken", "ab12"),)
    assert NAMED_ENCODINGS["o200k_base"].files[0].url == BLOB + "encodings/o200k_base.tiktoken"
    with pytest.raises(DataError, match=r"^unknown tiktoken encoding 'x'; available names: "
                                        r"gpt2, r50k_base, p50k_base, cl100k_base, o200k_base$"):
        named_encodings.load_named_encoding("x")


def test_missing_gpt2_files_message_in_full(caches):
    tk, ours = caches
    ours.mkdir(parents=True)
    (ours / "vocab.bpe").write_bytes(b"half")             # a wrong copy, under its own name
    with pytest.raises(DataError) as info:
        build_tokenizer("tiktoken:gpt2")
    assert str(info.value) == (
        f"tiktoken encoding 'gpt2' is not available offline: {ours / 'vocab.bpe'} is not the "
        f"published vocab.bpe (sha256 differs: partial or wrong file; delete it); encoder.json "
        f"is not on this machine. tfstudio never downloads. On a machine with internet, "
        f"download {BLOB}gpt-2/encodings/main/vocab.bpe and "
        f"{BLOB}gpt-2/encodings/main/encoder.json and copy them into {ours}{os.sep} under the "
        f"same name; or run python -c \"import tiktoken; tiktoken.get_encoding('gpt2')\" there "
        f"and copy tiktoken's cache folder here, pointing TIKTOKEN_CACHE_DIR at it. "
        f"Searched: {tk}, {ours}.")


def _data_gym_encoding(monkeypatch):
    """A two-file (vocab.bpe + encoder.json) encoding "gym": 256 bytes and the merge "a b"."""
    to_char = gpt2_bytes_to_unicode()
    encoder = {c: i for i, c in enumerate(to_char.values())} | {"ab": 256}
    vocab, enc = b"#version: 0.2\na b\n", json.dumps(encoder).encode()
    files = (SourceFile("https://example.invalid/gym/vocab.bpe", hashlib.sha256(vocab).hexdigest()),
             SourceFile("https://example.invalid/gym/encoder.json",
                        hashlib.sha256(enc).hexdigest()))
    monkeypatch.setitem(NAMED_ENCODINGS, "gym", NamedEncoding(files, r"\S+|\s+",
                                                              {"<|endoftext|>": 257}))
    return vocab, enc


def test_a_two_file_encoding_reads_gpt2s_format(caches, monkeypatch, tmp_path):
    tk, ours = caches
    vocab, enc = _data_gym_encoding(monkeypatch)
    ours.mkdir(parents=True)
    (ours / "vocab.bpe").write_bytes(vocab)
    with pytest.raises(DataError) as info:                # one of the two files is here
        build_tokenizer("tiktoken:gym")
    assert str(info.value).startswith("tiktoken encoding 'gym' is not available offline: "
                                      "encoder.json is not on this machine. tfstudio never "
                                      "downloads. On a machine with internet, download "
                                      "https://example.invalid/gym/encoder.json and copy it into")
    (ours / "encoder.json").write_bytes(enc)
    tok = build_tokenizer("tiktoken:gym")
    assert tok.encode("ab") == [256]
    assert tok.encode("a!") == [ord("a") - ord("!"), 0]   # GPT-2's ids: printable bytes first
    assert (tok.eot_id, tok.pad_id, tok.mask_id, tok.bos_id) == (257, 258, 259, 260)
    assert tok.to_dict() == {"format_version": 1, "kind": "tiktoken", "name": "tiktoken:gym",
                             "specials": {"<|endoftext|>": 257, "<|pad|>": 258, "<|mask|>": 259,
                                          "<|bos|>": 260},
                             "encoding": "gym",
                             "files_sha256": [hashlib.sha256(vocab).hexdigest(),
                                              hashlib.sha256(enc).hexdigest()]}
    again = load_tokenizer(tok.save(tmp_path / "run"))     # a run reopens it by name
    assert again.to_dict() == tok.to_dict() and again.encode("ab a") == [256, 220, 64]


def test_tiktoken_token_bytes_name_unassigned_and_foreign_ids():
    ranks = {bytes((b,)): b for b in range(256)}
    tok = TiktokenTokenizer(kind="tiktoken", name="tiktoken:t", pattern=r"\S+|\s+", ranks=ranks,
                            specials={"<|endoftext|>": 257, "<|pad|>": 258, "<|mask|>": 259,
                                      "<|bos|>": 260}, state={})
    assert tok.token_bytes(65) == b"A" and tok.token_bytes(257) == b"<|endoftext|>"
    assert tok.encoding.name == "tiktoken-t"                # tiktoken's label, ":" as "-"
    assert tok.token_bytes(0) == b"\x00"                    # the first id is valid too
    assert tok.token_strings([0xC3, 260]) == ["\\xc3", "<|bos|>"]
    with pytest.raises(DataError, match=r"^token id 256 is not assigned in tiktoken:t$"):
        tok.token_bytes(256)                              # the gap below the specials
    with pytest.raises(DataError, match=r"^token id 256 is not assigned in tiktoken:t$"):
        tok.decode([65, 256])
    with pytest.raises(DataError, match=r"^token id 261 is outside this tokenizer's vocabulary "
                                        r"\(0\.\.260, tiktoken:t\)"):
        tok.token_bytes(261)


def test_gpt2_files_leave_out_the_encoders_specials_and_must_agree():
    to_char = gpt2_bytes_to_unicode()
    encoder = {c: i for i, c in enumerate(to_char.values())} | {"ab": 256}
    vocab = b"#version: 0.2\na b\n"
    ranks = named_encodings._data_gym_ranks(vocab, json.dumps(encoder).encode())
    with_specials = encoder | {"<|endoftext|>": 257, "<|startoftext|>": 258}
    assert named_encodings._data_gym_ranks(vocab, json.dumps(with_specials).encode()) == ranks
    assert len(ranks) == 257 and ranks[b"ab"] == 256
    disagreeing = encoder | {"ab": 300}
    with pytest.raises(DataError, match=r"^gpt2's vocab\.bpe and encoder\.json do not agree; "
                                        r"fetch both again$"):
        named_encodings._data_gym_ranks(vocab, json.dumps(disagreeing).encode())


def test_bpe_training_text_is_cut_at_exactly_max_train_chars():
    from tfstudio.data.bpe import _training_pieces
    corpus = _corpus(["abc"], ["def"], ["ghi"])
    assert list(_training_pieces(corpus, 5)) == ["abc", "de"]     # no empty pieces after it
    assert list(_training_pieces(corpus, 9)) == ["abc", "def", "ghi"]
    assert list(_training_pieces(corpus, 1)) == ["a"]


def test_bpe_vocabulary_bounds_are_inclusive_and_the_cache_key_is_documented(tmp_path,
                                                                            monkeypatch):
    from importlib import metadata

    from tfstudio.data.bpe import MAX_TRAIN_CHARS
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path))
    corpus = _corpus(["abab abab cdcd " * 40])
    smallest = build_tokenizer("bpe:260", corpus)                 # 256 bytes + 4 specials
    assert smallest.vocab_size == 260 and smallest.eot_id == 256
    version = metadata.version("rustbpe")
    assert smallest.to_dict()["trainer"] == f"rustbpe {version}"
    assert [p.name for p in (tmp_path / "bpe").iterdir()] == [
        f"{corpus.fingerprint[:32]}-v260-c{MAX_TRAIN_CHARS}-rustbpe{version}.json"]
    largest = build_tokenizer(f"bpe:{1 << 20}", corpus, use_cache=False)
    assert largest.vocab_size < 1 << 20                           # the corpus ran out of merges
    for size in (259, (1 << 20) + 1):
        with pytest.raises(DataError, match=rf"^BPE vocabulary size {size} is out of range: it "
                                            r"must be at least 260 \(256 bytes \+ 4 specials\) "
                                            r"and at most 1048576$"):
            build_tokenizer(f"bpe:{size}", corpus)


def test_damaged_bpe_tables_are_refused():
    from tfstudio.data import tokenizer_from_dict
    from tfstudio.data.bpe import SPLIT_PATTERN
    single = [base64.b64encode(bytes((b,))).decode() for b in range(256)]
    state = {"format_version": 1, "kind": "bpe", "name": "bpe:261", "pattern": SPLIT_PATTERN,
             "specials": {"<|endoftext|>": 257, "<|pad|>": 258, "<|mask|>": 259, "<|bos|>": 260},
             "trainer": "rustbpe test", "corpus_fingerprint": "0" * 64}
    ok = tokenizer_from_dict({**state, "ranks": single + ["YWI="]})        # + b"ab"
    assert ok.encode("ab") == [256] and ok.vocab_size == 261
    # the message names the file it came from ("t" here), as every tokenizer fault does
    damaged = r"^t: BPE table is damaged: duplicate tokens or missing single bytes$"
    with pytest.raises(DataError, match=damaged):                        # b"a" twice
        tokenizer_from_dict({**state, "ranks": single + ["YQ=="]}, "t")
    with pytest.raises(DataError, match=damaged):                        # no single byte 0
        tokenizer_from_dict({**state, "ranks": single[1:] + ["YWI=", "YWJj"]}, "t")
    with pytest.raises(DataError, match=r"^t: malformed bpe tokenizer \(Error\('Only base64 data"):
        tokenizer_from_dict({**state, "ranks": single + ["Y!WI="]}, "t")  # not base64


def test_every_wrong_copy_is_named(caches):
    tk, ours = caches
    url = BLOB + "encodings/cl100k_base.tiktoken"
    wrong = [tk / hashlib.sha1(url.encode()).hexdigest(), ours / "cl100k_base.tiktoken"]
    for path in wrong:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"half")
    with pytest.raises(DataError, match=rf"offline: {re.escape(f'{wrong[0]}, {wrong[1]}')} is "
                                        r"not the published cl100k_base\.tiktoken \(sha256"):
        build_tokenizer("tiktoken:cl100k_base")


def test_saving_and_reading_tokenizers_name_the_file(tmp_path):
    from tfstudio.data import tokenizer_from_dict
    tok = ByteTokenizer()
    assert tok.token_bytes(0) == b"\x00" and tok.decode([0]) == "\x00"   # id 0 is valid
    assert CharTokenizer("ab").decode([0]) == "a"
    direct = tok.save(tmp_path / "deep" / "named.json")          # a .json path is the file
    assert direct == tmp_path / "deep" / "named.json" and direct.is_file()
    folder = tok.save(tmp_path / "run" / "a")                     # a folder: tokenizer.json in it
    assert folder == tmp_path / "run" / "a" / "tokenizer.json"
    assert load_tokenizer(folder.parent).to_dict() == tok.to_dict()
    wide = CharTokenizer("é日").save(tmp_path / "wide.json")   # written as ASCII JSON
    assert wide.read_bytes().isascii() and load_tokenizer(wide).alphabet == "é日"
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(DataError, match=rf"^{re.escape(str(bad))}: not valid JSON \("):
        load_tokenizer(bad)
    latin = '{"format_version": 1, "kind": "char", "alphabet": "é"}'
    bad.write_bytes(latin.encode("latin-1"))  # hand-edited in another encoding: read as UTF-8
    with pytest.raises(DataError) as caught:
        load_tokenizer(bad)
    assert str(caught.value) == (f"{bad}: not UTF-8 text (byte {latin.index('é')}: invalid "
                                 "continuation byte); the file is damaged")
    bad.write_text('{"format_version": 1, "kind": "nope"}')
    with pytest.raises(DataError, match=rf"^{re.escape(str(bad))}: unknown tokenizer kind "
                                        r"'nope'; expected one of \('byte', 'char', 'word', 'bpe', "
                                        r"'tiktoken'\)$"):
        load_tokenizer(bad)
    with pytest.raises(DataError, match=r"^tokenizer: expected a JSON object describing a "
                                        r"tokenizer$"):
        tokenizer_from_dict([1])
    with pytest.raises(DataError, match=r"^tokenizer: tokenizer format_version 2 is not "
                                        r"supported \(this tfstudio reads 1\)$"):
        tokenizer_from_dict({"format_version": 2, "kind": "byte"})


def test_a_tokenizer_kind_without_its_own_encode_array_gets_int64_ids_from_encode():
    from tfstudio.data.tokenizer import Tokenizer

    class Vowels(Tokenizer):  # the smallest kind: only what a kind must define
        kind = "vowels"

        def encode(self, text):
            return ["aeiou".index(c) for c in text if c in "aeiou"]

        def token_bytes(self, token_id):
            return "aeiou"[token_id].encode()

        def _state(self):
            return {}

    tok = Vowels.__new__(Vowels)
    ids = tok.encode_array("education")
    assert ids.dtype == np.int64 and ids.tolist() == [1, 4, 0, 2, 3]
    assert tok.encode_array("xyz").dtype == np.int64  # no ids: still int64, not numpy's float


def test_a_tokenizer_names_its_kind_name_and_vocabulary_when_printed():
    tok = ByteTokenizer()
    assert repr(tok) == f"<ByteTokenizer {tok.name} vocab={tok.vocab_size}>"
    assert repr(CharTokenizer("ab")).startswith("<CharTokenizer char vocab=")


def test_byte_tokenizer_encode_array_gives_int64_utf8_bytes():
    ids = ByteTokenizer().encode_array("é!")
    assert ids.dtype == np.int64 and ids.tolist() == [0xC3, 0xA9, 0x21]
