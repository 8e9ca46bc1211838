"""Probe inputs (tfstudio/probes/inputs.py): the text a probe reads, its refusals, its positions
and the default text for each corpus."""
from __future__ import annotations

import pytest
import torch
from probe_models import model_of

from tfstudio.data.corpus import Corpus, load_corpus
from tfstudio.data.tasks import CopyTask
from tfstudio.probes import default_probe_text, probe_inputs
from tfstudio.probes.inputs import FALLBACK_TEXT, max_positions

torch.set_num_threads(1)


def test_an_empty_probe_text_is_refused_with_what_to_type(gpt, tokenizer):
    model, _ = gpt
    for text in ("", "  \n"):
        with pytest.raises(ValueError) as caught:
            probe_inputs(model, tokenizer, text)
        assert str(caught.value) == (
            "the probe text is empty; type a few words (or a task example such as "
            "abcdefgh>hgfedcba) to look inside the model")


def test_the_probe_may_be_a_single_token(gpt, tokenizer):
    model, _ = gpt
    inputs = probe_inputs(model, tokenizer, "abc", max_tokens=1)
    assert inputs.ids == {"tokens": tokenizer.encode("abc")[:1]}
    assert inputs.args[0].dtype == torch.long and inputs.args[0].shape == (1, 1)


def test_only_a_learned_table_limits_the_positions(gpt, tokenizer):
    model, _ = gpt
    learned = [m for _, m in model.blocks() if getattr(m, "scheme", None) == "learned"]
    assert max_positions(model) == learned[0].max_len == 256   # tiny-gpt's table
    t5 = model_of("tiny-t5", tokenizer)      # sinusoidal positions: max_len is no limit
    assert [m.max_len for _, m in t5.blocks() if getattr(m, "scheme", None) == "sinusoidal"]
    assert max_positions(t5) is None
    inputs = probe_inputs(t5, tokenizer, "a" * 300 + ">b", max_tokens=400)
    assert len(inputs.ids["source"]) == 300


def test_an_encoder_decoder_reads_the_text_split_at_the_first_separator_or_in_half(tokenizer):
    t5 = model_of("tiny-t5", tokenizer)
    bos, enc = tokenizer.bos_id, tokenizer.encode
    for text, source, target in [("ab>cd>ef", "ab", "cd>ef"),    # only the first separator
                                 ("abcdef", "abc", "def"),       # none: in half
                                 ("abcde", "ab", "cde")]:
        inputs = probe_inputs(t5, tokenizer, text)
        assert inputs.ids == {"source": enc(source), "target": [bos] + enc(target)}, text
        assert [a[0].tolist() for a in inputs.args] == [enc(source), [bos] + enc(target)]
    custom = probe_inputs(t5, tokenizer, "ab|cd>e", separator="|")
    assert custom.ids["source"] == enc("ab") and custom.ids["target"] == [bos] + enc("cd>e")


def corpus_of(*documents, task=None):
    """A corpus whose documents arrive in the given chunks."""
    return Corpus("test", "test", "task" if task else "file", "", 0,
                  lambda: iter([iter(chunks) for chunks in documents]), task)


def test_the_default_text_without_a_corpus_is_the_pangram():
    assert default_probe_text() == default_probe_text(None) == FALLBACK_TEXT
    assert default_probe_text(corpus_of()) == FALLBACK_TEXT          # no documents
    assert default_probe_text(corpus_of(["  ", "\n"])) == FALLBACK_TEXT  # only blanks


def test_the_default_text_of_a_task_is_one_fixed_example_without_its_newline():
    text = default_probe_text(load_corpus("task:reverse"))
    source, target = text.split(">")
    assert target == source[::-1] and not text.endswith("\n")
    assert all(default_probe_text(load_corpus("task:reverse")) == text for _ in range(3))
    assert default_probe_text(load_corpus("task:copy:letters=X")) == "X" * 7 + ">" + "X" * 7
    spaces = corpus_of(task=CopyTask(letters=" "))   # only the newline is taken off
    assert default_probe_text(spaces) == " " * 7 + ">" + " " * 7


def test_the_default_text_of_a_corpus_is_its_opening_words_cut_at_a_word():
    words = "the cat sat on the mat and then the dog came in to see what was there"
    # 48 characters: "the cat sat on the mat and then the dog came in " -> cut after "in"
    assert default_probe_text(corpus_of([words])) == words[:47]
    assert len(words[:47]) == 47 and words[47] == " "
    # the chunks of a document join: "the cat sa" + "t on ..."
    assert default_probe_text(corpus_of([words[:10], words[10:]])) == words[:47]
    assert default_probe_text(corpus_of([words]), max_chars=10) == "the cat"
    # the last space is in the first half: the cut is kept whole (no word cut shorter)
    one_word = "a " + "b" * 60
    assert default_probe_text(corpus_of([one_word])) == one_word[:48]
    assert default_probe_text(corpus_of(["abc de" + "f" * 10]), max_chars=9) == "abc defff"
    assert default_probe_text(corpus_of(["abcde fghij"]), max_chars=9) == "abcde"
    # the cut is at the last space: what comes before it stays as it is
    assert default_probe_text(corpus_of(["ab cd ef gh"]), max_chars=8) == "ab cd"
    assert default_probe_text(corpus_of(["ab cd  efgh"]), max_chars=9) == "ab cd "
    assert default_probe_text(corpus_of(["  short text  "])) == "short text"
    # a first document blank within its first 4 x max_chars characters is skipped
    blank_start = " " * 192 + "hidden words"
    assert default_probe_text(corpus_of([blank_start], ["next document"])) == "next document"
    assert default_probe_text(corpus_of([" " * 191 + "x"], ["next"])) == "x"
    # ... counted across the document's chunks: 150 + 42 characters are read, the rest not
    assert default_probe_text(corpus_of([" " * 150, " " * 30 + "x" * 100])) == "x" * 12
    assert default_probe_text(corpus_of([" " * 100, " " * 100, "late words"],
                                        ["next"])) == "next"
