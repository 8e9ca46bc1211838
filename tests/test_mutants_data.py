"""Direct tests for behaviour of tfstudio/data that mutation testing (bench/mutation.py) found
unpinned: each asserts the documented result against numbers worked out in the test."""
import numpy as np
import pytest
from gpt2_bytes import gpt2_bytes_to_unicode

from tfstudio.data import DataError, WindowSampler, eval_windows


# ---------------------------------------------------------------- windows.py

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


# ---------------------------------------------------------------- tasks.py

from tfstudio.data import TaskSampler, parse_task, seq2seq_batch  # noqa: E402
from tfstudio.data.simple_tokenizers import CharTokenizer  # noqa: E402
from tfstudio.data.tasks import _describe  # noqa: E402


@pytest.mark.parametrize("text, value", [
    ("1", True), ("true", True), ("yes", True), ("TRUE", True), ("Yes", True),
    ("0", False), ("false", False), ("no", False), ("NO", False), ("False", False)])
def test_boolean_task_parameters_read_every_spelling(text, value):
    task = parse_task(f"add:reverse_answer={text}")
    assert task.reverse_answer is value
    assert task.spec == ("task:add" if value else "task:add:reverse_answer=false")


def test_a_boolean_parameter_that_is_neither_says_so():
    with pytest.raises(DataError, match=r"^task 'add': reverse_answer must be true or false, "
                                        r"got 'maybe'$"):
        parse_task("add:reverse_answer=maybe")


def test_unknown_parameters_list_the_task_parameters_with_defaults():
    with pytest.raises(DataError, match=r"its parameters are digits \(default 3\), "
                                        r"reverse_answer \(default true\)$"):
        parse_task("add").__class__(width=3)
    assert _describe({}) == "none"
    assert _describe({"a": 1, "b": False}) == "a (default 1), b (default false)"


@pytest.mark.parametrize("length, ok", [(2, True), (4, True), (6, True), (3, False),
                                        (0, False), (5, False)])
def test_bracket_lengths_must_be_even_and_at_least_two(length, ok):
    if ok:
        task = parse_task(f"brackets:length={length}")
        assert all(len(ex.source) == length for ex in task.examples(20))
    else:
        with pytest.raises(DataError, match=f"length must be even and >= 2, got {length}"):
            parse_task(f"brackets:length={length}")


def test_letters_may_be_any_but_the_separator_and_newline():
    task = parse_task("copy:letters=aXb")
    assert set("".join(ex.source for ex in task.examples(30))) <= set("aXb")
    assert task.spec == "task:copy:letters=aXb"        # only booleans are written lower-case
    with pytest.raises(DataError, match=r"must not contain \['>'\]"):
        parse_task("copy:letters=a>b")
    with pytest.raises(DataError, match=r"must be non-empty and must not contain \['\(empty\)'\]"):
        parse_task("copy:letters=")


# ---------------------------------------------------------------- task_batches.py

def _copy_sampler(batch_size=3, **kw):
    task = parse_task("copy")
    return TaskSampler(task, CharTokenizer(task.alphabet), batch_size, **kw)


def test_seq2seq_batch_of_nothing_is_refused():
    with pytest.raises(DataError, match=r"^seq2seq_batch needs at least one \(source, target\) "
                                        r"pair$"):
        seq2seq_batch([], CharTokenizer("ab"))


def test_task_sampler_counts_steps_and_resumes_at_them():
    sampler = _copy_sampler()
    assert sampler.state_dict()["step"] == 0
    batches = [sampler.next_examples() for _ in range(3)]
    assert sampler.state_dict()["step"] == 3
    assert batches[0] != batches[1] != batches[2]
    fresh = _copy_sampler(seed=0)
    assert fresh.next_examples() == batches[0]        # the default seed is 0
    resumed = _copy_sampler()
    resumed.load_state_dict({**sampler.state_dict(), "step": 2})
    assert resumed.next_examples() == batches[2]


def test_task_sampler_takes_one_row_and_refuses_none():
    assert len(_copy_sampler(batch_size=1).next_examples()) == 1
    with pytest.raises(DataError, match="^batch size must be at least 1, got 0$"):
        _copy_sampler(batch_size=0)


def test_task_sampler_seq2seq_batches_end_targets_with_eot():
    sampler = _copy_sampler(batch_size=2)
    tok = sampler.tokenizer
    examples = _copy_sampler(batch_size=2).next_examples()
    batch = sampler.next_seq2seq_batch()
    for row, ex in enumerate(examples):
        target = tok.encode(ex.target) + [tok.eot_id]
        assert batch.labels[row, :len(target)].tolist() == target
        assert batch.decoder_input[row, :len(target)].tolist() == [tok.bos_id] + target[:-1]
        assert batch.source[row, :len(ex.source)].tolist() == tok.encode(ex.source)
    assert sampler.state_dict()["step"] == 1


def test_task_sampler_resume_mismatch_names_both_tasks_and_sizes():
    saved = _copy_sampler(batch_size=4).state_dict()
    task = parse_task("reverse")
    other = TaskSampler(task, CharTokenizer(task.alphabet), 4)
    with pytest.raises(DataError, match=r"saved for task:copy with batch size 4, this one is "
                                        r"task:reverse with batch size 4"):
        other.load_state_dict(saved)


# ---------------------------------------------------------------- corpus.py

import random  # noqa: E402

from tfstudio.data import list_corpora, load_corpus  # noqa: E402
from tfstudio.data import storygen  # noqa: E402
from tfstudio.data.tasks import TASKS  # noqa: E402

STORIES = ("Generated short stories about named people, places and objects; pronouns to "
           "resolve.")


def test_the_corpus_picker_lists_every_built_in_choice():
    infos = {i.spec: i for i in list_corpora()}
    for size in storygen.SIZES:
        info = infos.pop(f"sample:{size}")
        assert info.title == f"Stories ({size})"
        assert info.description == STORIES + (" The default." if size == "medium" else "")
        path = storygen.sample_path(size)
        assert info.size_bytes == (path.stat().st_size if path.exists() else None)
    pydoc = infos.pop("pydoc")
    assert (pydoc.title, pydoc.description, pydoc.size_bytes) == (
        "Python documentation",
        "The running Python's own help topics (pydoc_data): real English.", None)
    assert sorted(infos) == sorted(f"task:{name}" for name in TASKS)
    for name, cls in TASKS.items():
        info = infos[f"task:{name}"]
        assert (info.title, info.description, info.size_bytes) == (
            f"Task: {name}", cls.description, None)
    shipped = [i for i in list_corpora() if i.spec.startswith("sample:") and i.size_bytes]
    assert shipped, "the shipped stories have a size"


def test_a_task_corpus_is_twenty_thousand_seed_zero_examples_as_text():
    corpus = load_corpus("task:sort")
    task = corpus.task
    assert (corpus.spec, corpus.title, corpus.kind) == ("task:sort", "Task: sort", "task")
    assert corpus.description == f"{task.description} (20,000 examples, seed 0, as text.)"
    assert corpus.size_bytes == 20_000 * len(task.example(random.Random(0)).text)
    rng = random.Random(0)
    expected = "".join(task.example(rng).text for _ in range(20_000))
    assert corpus.text() == expected


def test_a_missing_sample_file_has_no_size_yet(monkeypatch, tmp_path):
    real = storygen.sample_path
    monkeypatch.setattr(storygen, "sample_path",
                        lambda size: tmp_path / "gone.txt" if size == "large" else real(size))
    sizes = {i.spec: i.size_bytes for i in list_corpora()}
    assert sizes["sample:large"] is None
    assert sizes["sample:small"] == real("small").stat().st_size


# ---------------------------------------------------------------- textio.py, token_cache.py

from tfstudio.data import split_train_val  # noqa: E402
from tfstudio.data.textio import check_errors_mode, read_jsonl_texts, read_text_chunks  # noqa: E402
from tfstudio.data.token_cache import token_dtype  # noqa: E402


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


def test_unknown_error_mode_names_both_choices():
    with pytest.raises(DataError, match=r"""^errors='ignore' is not supported; use "strict" """
                                        r"""\(stop at invalid UTF-8\) or "replace" \(read it """
                                        r"""as U\+FFFD\)$"""):
        check_errors_mode("ignore")


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 1 << 20])
def test_chunks_decode_split_characters_drop_one_bom_and_locate_bad_bytes(tmp_path, chunk):
    path = tmp_path / "t.txt"
    text = "\ufeffé日\ufeff\r\nb👍"
    path.write_bytes(text.encode())
    assert "".join(read_text_chunks(path, chunk_bytes=chunk)) == text[1:]  # only the first BOM
    bad = tmp_path / "bad.txt"
    bad.write_bytes("aé".encode() + b"\xff" + b"z")
    with pytest.raises(DataError, match=r"bad.txt: not valid UTF-8 at byte offset 3 \(byte ff: "
                                        r"invalid start byte\)\. Convert the file to UTF-8"):
        list(read_text_chunks(bad, chunk_bytes=chunk))
    assert "".join(read_text_chunks(bad, "replace", chunk_bytes=chunk)) == "aé\ufffdz"


def test_jsonl_lines_numbers_and_field_errors(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "one"}\n\n  \n{"text": "two"}\n{"text": "tail"}')
    assert list(read_jsonl_texts(path, chunk_bytes=4)) == ["one", "two", "tail"]
    cases = {'{"text": "a"}\n\n{"body": 1, "id": 2}\n': r"line 3: no \"text\" field \(it has "
                                                        r"'body', 'id'\); each line must be",
             '{"text": "a"}\n[1]\n': r"line 2: no \"text\" field; each line must be an object",
             '{"text": 5}\n': r"line 1: \"text\" is int, expected a string$",
             '{"text": "a"}\n{"text": \n': r"line 2: not valid JSON \(Expecting value\); each "
                                           r"line of a \.jsonl file must be one JSON object",
             '{"text": "a"}\n{"text": "b"': r"d\.jsonl, line 2: not valid JSON"}
    for body, message in cases.items():
        path.write_text(body)
        with pytest.raises(DataError, match=message):
            list(read_jsonl_texts(path, chunk_bytes=3))


# ---------------------------------------------------------------- simple_tokenizers.py

from tfstudio.data.simple_tokenizers import ByteTokenizer  # noqa: E402


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


def test_a_sample_corpus_is_the_shipped_story_file():
    corpus = load_corpus("sample:small")
    path = storygen.sample_path("small")
    assert (corpus.spec, corpus.title, corpus.kind) == ("sample:small", "Stories (small)",
                                                        "sample")
    assert corpus.description == "Generated short stories (tfstudio.data.storygen)."
    assert corpus.size_bytes == path.stat().st_size
    assert corpus.text() == path.read_text(encoding="utf-8")


def test_sample_corpus_errors_say_what_exists_and_how_to_regenerate(monkeypatch, tmp_path):
    with pytest.raises(DataError, match=r"^unknown sample size 'huge'; use one of sample:small, "
                                        r"sample:medium, sample:large$"):
        load_corpus("sample:huge")
    monkeypatch.setattr(storygen, "sample_path", lambda size: tmp_path / f"stories-{size}.txt")
    with pytest.raises(DataError, match=r"stories-small\.txt is missing from this installation; "
                                        r"regenerate it with python -m tfstudio\.data\.storygen$"):
        load_corpus("sample:small")


def test_eval_examples_are_a_fixed_held_out_stream_of_512():
    from tfstudio.data.task_batches import EVAL_SEED
    sampler = _copy_sampler(seed=3)
    held_out = sampler.eval_examples()
    assert len(held_out) == 512 and held_out == sampler.eval_examples()
    assert held_out[:20] == parse_task("copy").examples(20, seed=EVAL_SEED + 3)
    assert held_out[:20] != parse_task("copy").examples(20, seed=0)   # not the text corpus
    assert held_out[:20] != _copy_sampler(seed=4).eval_examples(20)


def test_letter_tasks_accept_single_letters_and_refuse_empty_strings():
    one = parse_task("copy:min_len=1,max_len=1")
    assert {len(ex.source) for ex in one.examples(20)} == {1}
    with pytest.raises(DataError, match=r"need 1 <= min_len <= max_len, got min_len=0, max_len=3"):
        parse_task("copy:min_len=0,max_len=3")


# ---------------------------------------------------------------- token_cache.py (token_array)

from tfstudio.data import token_array  # noqa: E402
from tfstudio.data.corpus import Corpus  # noqa: E402


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


# ---------------------------------------------------------------- tokenizer.py (build_tokenizer)

from tfstudio.data import build_tokenizer, load_tokenizer  # noqa: E402


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


# ---------------------------------------------------------------- named_encodings.py, bpe.py

import base64  # noqa: E402
import re  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402

from tfstudio.data import named_encodings  # noqa: E402
from tfstudio.data.bpe import TiktokenTokenizer  # noqa: E402
from tfstudio.data.named_encodings import (NAMED_ENCODINGS, NamedEncoding,  # noqa: E402
                                           SourceFile, search_dirs)

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


# ---------------------------------------------------------------- storygen.py

def test_storygen_main_writes_the_shipped_files(tmp_path, monkeypatch, capsys):
    shipped = {size: storygen.sample_path(size).read_bytes() for size in storygen.SIZES}
    monkeypatch.setattr(storygen, "sample_path",
                        lambda size: tmp_path / "new" / "corpus" / f"stories-{size}.txt")
    storygen.main()
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{tmp_path / 'new' / 'corpus' / f'stories-{size}.txt'}: {len(data):,} bytes"
                     for size, data in shipped.items()]
    for size, data in shipped.items():
        assert (tmp_path / "new" / "corpus" / f"stories-{size}.txt").read_bytes() == data


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


def test_each_size_ends_with_the_first_story_that_reaches_it(monkeypatch):
    r = random.Random(3)
    stories = [storygen.story(r) + "\n\n" for _ in range(3)]   # what seed 3 draws, in order
    b1, b2 = len(stories[0]), len(stories[0]) + len(stories[1])
    assert storygen.generate_text(b1, seed=3) == stories[0]          # reached exactly: stop
    assert storygen.generate_text(b1 + 1, seed=3) == stories[0] + stories[1]
    assert storygen.generate_text(b2, seed=3) == stories[0] + stories[1]
    monkeypatch.setattr(storygen, "SIZES", {"one": b1, "two": b1 + 1, "three": b2 + 1})
    assert storygen.generate_sizes(seed=3) == {"one": stories[0],
                                               "two": stories[0] + stories[1],
                                               "three": "".join(stories)}


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
    damaged = r"^BPE table is damaged: duplicate tokens or missing single bytes$"
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
                                        r"'nope'; expected one of \('byte', 'char', 'bpe', "
                                        r"'tiktoken'\)$"):
        load_tokenizer(bad)
    with pytest.raises(DataError, match=r"^tokenizer: expected a JSON object describing a "
                                        r"tokenizer$"):
        tokenizer_from_dict([1])
    with pytest.raises(DataError, match=r"^tokenizer: tokenizer format_version 2 is not "
                                        r"supported \(this tfstudio reads 1\)$"):
        tokenizer_from_dict({"format_version": 2, "kind": "byte"})


# ---------------------------------------------------------------- what no other test reached

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


def test_iterating_a_window_sampler_gives_its_next_batches():
    tokens = np.arange(500, dtype=np.int64)
    a, b = WindowSampler(tokens, 8, 4, seed=3), WindowSampler(tokens, 8, 4, seed=3)
    first, second = next(iter(a)), next(iter(a))
    for got, want in ((first, b.next_batch()), (second, b.next_batch())):
        assert all(np.array_equal(np.asarray(g), np.asarray(w)) for g, w in zip(got, want))


def test_a_task_sampler_makes_seq2seq_batches_of_its_next_examples():
    sampler, twin = _copy_sampler(seed=5), _copy_sampler(seed=5)
    batch = sampler.next_seq2seq_batch()
    tok = twin.tokenizer
    want = seq2seq_batch([(tok.encode(e.source), tok.encode(e.target))
                          for e in twin.next_examples()], tok)
    for name in ("source", "source_mask", "decoder_input", "labels"):
        assert np.array_equal(np.asarray(getattr(batch, name)), np.asarray(getattr(want, name)))
    assert sampler.step == 1


# --- survivors of the timeout rerun (mut-data2) -------------------------------------------------

import sys  # noqa: E402

from tfstudio.data.chunking import rechunk, safe_cut  # noqa: E402
from tfstudio.data.corpus import _is_blank  # noqa: E402
from tfstudio.data.paths import CACHE_ENV, cache_dir  # noqa: E402
from tfstudio.data.task_batches import task_lm_batch  # noqa: E402
from tfstudio.data.tasks import TaskExample  # noqa: E402


def test_the_pydoc_corpus_describes_the_running_pythons_topics():
    from pydoc_data.topics import topics
    corpus = load_corpus("pydoc")
    assert (corpus.spec, corpus.title, corpus.kind) == ("pydoc", "Python documentation", "pydoc")
    assert corpus.description == f"{len(topics)} help topics of Python's own documentation."
    assert corpus.size_bytes == sum(len(v.encode("utf-8")) for v in topics.values())


def test_a_python_without_pydoc_data_gets_one_line_naming_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pydoc_data.topics", None)  # makes the import fail
    with pytest.raises(DataError) as err:
        load_corpus("pydoc")
    assert str(err.value) == ("this Python has no pydoc_data module (some distributions strip "
                              "it); choose another corpus")


def test_a_missing_path_is_named_with_the_choices(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(DataError) as err:
        load_corpus(str(missing))
    msg = str(err.value)
    assert msg.startswith(f"no corpus {str(missing)!r}: not a built-in name")
    assert f"({', '.join(TASKS)})" in msg


def test_a_file_of_unknown_type_names_its_suffix_or_none(tmp_path):
    bare = tmp_path / "README"
    bare.write_text("hello")
    with pytest.raises(DataError) as err:
        load_corpus(str(bare))
    assert "unsupported file type (none); use a .txt, .md, .jsonl file" in str(err.value)


def test_a_single_file_corpus_names_its_path_kind_title_and_size(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_bytes("héllo world\n".encode())
    corpus = load_corpus(str(f))
    assert (corpus.spec, corpus.title, corpus.kind) == (str(f), "notes.txt", "file")
    assert corpus.description == f"Text from {f}."
    assert corpus.size_bytes == len("héllo world\n".encode())


def test_a_folder_corpus_reads_files_in_posix_path_order_and_sums_their_sizes(tmp_path):
    # "a-b.txt" < "a/b.txt" as text ('-' < '/'), though Path ordering puts a/b.txt first
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.txt").write_text("second")
    (tmp_path / "a-b.txt").write_text("first")
    corpus = load_corpus(str(tmp_path))
    assert corpus.text() == "first\n\nsecond"
    assert corpus.spec == str(tmp_path) and corpus.size_bytes == 11


def test_a_jsonl_file_read_with_replace_gets_u_fffd_for_bad_bytes(tmp_path):
    f = tmp_path / "d.jsonl"
    f.write_bytes(b'{"text": "ok \xff here"}\n')
    corpus = load_corpus(str(f), errors="replace")
    assert corpus.text() == "ok \ufffd here"


def test_a_whitespace_file_exactly_the_probe_size_is_blank(tmp_path):
    f = tmp_path / "w.txt"
    f.write_bytes(b" \n\t ")
    assert _is_blank(f, probe=4) is True
    assert _is_blank(f, probe=3) is False  # bigger than the probe: not read, taken as text


def test_safe_cut_finds_the_last_boundary_at_or_before_the_limit():
    # boundaries (letter then whitespace) of "ab cd ef gh" start at 1, 4, 7: cuts 2, 5, 8
    text = "ab cd ef gh"
    assert safe_cut(text, 6) == 5
    assert safe_cut(text, 3) == 2  # the boundary at 1 ends at 3 <= limit + 1
    assert safe_cut(text, 1) == 1  # the boundary at 1 would cut at 2 > 1: hard cut
    assert safe_cut("a b", 2) == 1  # a boundary at position 0 counts
    assert safe_cut("abc", 2) == 2  # no boundary: hard cut at the limit


def test_rechunk_leaves_a_piece_of_exactly_the_size_whole():
    assert list(rechunk(["ab cd"], 5)) == ["ab cd"]
    assert list(rechunk(["ab cd", "e"], 5)) == ["ab", " cde"]


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


def test_task_lm_batch_is_as_wide_as_the_longest_line_less_one():
    tok = CharTokenizer("0123456789+=\n")
    examples = [TaskExample("1+2", "3", "="), TaskExample("10+20", "30", "=")]
    batch = task_lm_batch(examples, tok)
    assert tuple(batch.inputs.shape) == (2, len("10+20=30\n") - 1)
    assert batch.inputs.dtype == batch.targets.dtype == __import__("torch").long


def test_cache_dir_is_the_env_folder_or_home_dot_cache_tfstudio(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    assert cache_dir("tok") == tmp_path / "c" / "tok" and (tmp_path / "c" / "tok").is_dir()
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "tfstudio"


def test_byte_tokenizer_encode_array_gives_int64_utf8_bytes():
    ids = ByteTokenizer().encode_array("é!")
    assert ids.dtype == np.int64 and ids.tolist() == [0xC3, 0xA9, 0x21]


def test_unknown_task_names_the_choices_and_a_value_may_hold_an_equals_sign():
    with pytest.raises(DataError, match=r"^unknown task 'nope'; choose one of ") as err:
        parse_task("nope")
    assert str(err.value).endswith(", ".join(TASKS))
    with pytest.raises(DataError, match=r"digits must be an integer, got '3=4'"):
        parse_task("add:digits=3=4")


def test_add_task_digits_range_and_operand_size():
    assert parse_task("add:digits=1").digits == 1
    assert parse_task("add:digits=18").digits == 18
    for bad in (0, 19):
        with pytest.raises(DataError, match=rf"^task 'add': digits must be 1..18, got {bad}$"):
            parse_task(f"add:digits={bad}")
    sources = [e.source for e in parse_task("add:digits=3").examples(200, seed=1)]
    biggest = max(max(int(x) for x in s.split("+")) for s in sources)
    assert biggest > 500  # operands range over 0..999


def test_task_examples_default_to_seed_0():
    task = parse_task("add")
    rng = random.Random(0)
    assert task.examples(5) == [task.example(rng) for _ in range(5)]
