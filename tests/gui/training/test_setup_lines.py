"""The line under the run setup's tokenizer preview, without Qt (gui/training/setup_lines.py):
computed from the tokenizer and the probe text, each part flipping with them; the corpus entry
a run's corpus picks and the devices offered. The setup that shows it, built on its worker:
test_states.py."""
from __future__ import annotations

import sys
from types import SimpleNamespace

from tfstudio.data import build_tokenizer, load_corpus
from tfstudio.data.tokenizer import UNK
from tfstudio.gui.training.setup_lines import (building_line, corpus_entry, devices, has_gpu,
                                              preview_line, token_preview_html,
                                              unknown_characters)
from tfstudio.probes import default_probe_text


def line(tokenizer, text: str, default: bool = False) -> str:
    return preview_line(tokenizer, text, tokenizer.encode(text), default)


def test_the_line_counts_tokens_and_characters_and_says_whose_text_it_is():
    corpus = load_corpus("task:reverse")
    char = build_tokenizer("char", corpus=corpus)
    default = default_probe_text(corpus)                      # what the trainer reads
    said = line(char, default, default=True)
    assert said.startswith(f"{char.name}: {char.vocab_size:,} ids · {len(default)} tokens for "
                           f"{len(default)} characters (1.0 per token)")
    assert said.endswith(" · the default probe text for this corpus")
    assert "default probe text" not in line(char, "abc>cba")  # the user's own text
    words = build_tokenizer("word:2000", corpus=load_corpus("sample:small"))
    assert "3 tokens for 11 characters (3.7 per token)" in line(words, "the cat sat")


def test_a_long_text_says_the_looks_read_its_first_tokens():
    char = build_tokenizer("char", corpus=load_corpus("task:reverse"))
    assert "the looks inside read its first 64" in line(char, "abc" * 30)  # 90 tokens
    assert "first 64" not in line(char, "abc" * 21)                        # 63 tokens


def test_characters_the_tokenizer_does_not_know_are_each_named_once():
    char = build_tokenizer("char", corpus=load_corpus("task:reverse"))
    text = "abc XYZX"                      # capitals and a space: not in the task's alphabet
    assert unknown_characters(char, text, char.encode(text)) == " XYZX"
    assert "5 characters not in its vocabulary ( XYZ) read as the unknown token" in \
        line(char, text)
    assert "1 character not in its vocabulary (&lt;)" in line(char, "ab<")  # escaped, singular
    assert "not in its vocabulary" not in line(char, "abc")
    byte = build_tokenizer("byte")         # bytes know every character: nothing unknown
    assert unknown_characters(byte, text, byte.encode(text)) == ""
    # a word tokenizer's unknown token stands for a word, not a character: none is named
    words = build_tokenizer("word:2000", corpus=load_corpus("sample:small"))
    ids = words.encode("zqxv qqzx")
    assert words.specials[UNK] in ids
    assert unknown_characters(words, "zqxv qqzx", ids) == ""


OFFERED = ["sample:small", "sample:medium", "task:reverse", "__file__", "__folder__"]


def test_a_runs_corpus_picks_its_one_entry_and_a_file_of_its_own_is_added_by_name():
    assert corpus_entry("task:reverse", OFFERED) == ("task:reverse", None)
    assert corpus_entry("sample", OFFERED) == ("sample:medium", None)   # one name per corpus
    assert corpus_entry("sample:small", OFFERED) == ("sample:small", None)
    assert corpus_entry("/data/notes/war-and-peace.txt", OFFERED) == \
        ("/data/notes/war-and-peace.txt", "war-and-peace.txt")
    assert corpus_entry("sample:large", OFFERED) == ("sample:large", "sample:large")
    assert corpus_entry("sample", ["task:reverse"]) == ("sample", "sample")
    assert building_line("bpe:2000", "sample:small") == \
        "Building the bpe:2000 tokenizer on sample:small…"


def fake_torch(cuda: int, mps: bool):
    return SimpleNamespace(
        cuda=SimpleNamespace(is_available=lambda: cuda > 0, device_count=lambda: cuda),
        backends=SimpleNamespace(mps=SimpleNamespace(is_available=lambda: mps)))


def test_the_devices_offered_are_those_a_loaded_torch_sees_and_torch_is_never_imported(
        monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert devices() == ["auto", "cpu"] and not has_gpu(devices())
    monkeypatch.setitem(sys.modules, "torch", fake_torch(2, False))
    assert devices() == ["auto", "cpu", "cuda", "cuda:0", "cuda:1"] and has_gpu(devices())
    monkeypatch.setitem(sys.modules, "torch", fake_torch(0, True))
    assert devices() == ["auto", "cpu", "mps"] and has_gpu(devices())


def test_the_preview_tints_each_token_in_turn_and_writes_its_id_under_it_escaped():
    preview = token_preview_html(["a", " ", "<b>"], [97, 32, 7], "#777777")
    cells = preview.split("&#8203;")
    assert len(cells) == 3
    assert cells[0].startswith("<span style='background-color:rgba(78,121,167,0.28);'>")
    assert "rgba(242,142,43,0.28)" in cells[1] and ">␣</span>" in cells[1]   # made visible
    assert "&lt;b&gt;" in cells[2] and "<sub style='color:#777777;'>7</sub>" in cells[2]
    assert token_preview_html([], [], "#777777") == ""
