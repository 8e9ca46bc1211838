"""The word-level tokenizer: one id per word of the corpus (with its space), the same id in any
sentence, unknown words as <|unk|>, made by the factory, saved and loaded with a run."""
from __future__ import annotations

import pytest

from tfstudio.data import DataError, build_tokenizer
from tfstudio.data.corpus import load_corpus
from tfstudio.data.tokenizer import UNK
from tfstudio.data.tokenizer_factory import load_tokenizer, tokenizer_from_dict
from tfstudio.data.word_tokenizer import WordTokenizer, pieces

TEXT = "The cat sat. The dog sat!\n\nA cat ran,  the dog sat."


class Corpus:
    spec = "inline"

    def documents(self):
        return iter([iter([TEXT[:20], TEXT[20:]])])


def test_text_is_cut_into_words_with_their_space_punctuation_and_whitespace():
    assert pieces("The cat sat.\n\nA  dog") == ["The", " cat", " sat", ".", "\n", "\n", "A", " ",
                                                 " dog"]
    assert "".join(pieces(TEXT)) == TEXT
    assert pieces("The cat sat.") == ["The", " cat", " sat", "."]


def test_the_commonest_words_get_the_first_ids_and_the_rest_are_unknown():
    tok = WordTokenizer.from_corpus(Corpus(), 4)
    assert tok.words == [" sat", "\n", " cat", " dog"]     # 3, then 2s in order of the piece
    ids = tok.encode("The dog sat.")                         # a word split across two chunks
    assert ids == [tok.specials[UNK], 3, 0, tok.specials[UNK]]   # of the corpus still counts
    assert tok.decode(ids) == "\ufffd dog sat\ufffd"
    assert tok.vocab_size == 4 + 5                           # 4 specials and <|unk|>


def test_the_same_word_in_different_sentences_is_one_id():
    tok = build_tokenizer("word:50", Corpus())
    first, second = tok.encode("The cat sat."), tok.encode("A cat ran")
    assert first[1] == second[1] == tok.words.index(" cat")
    assert tok.decode(tok.encode(TEXT)) == TEXT              # every piece of the corpus known


def test_it_is_saved_and_loaded_with_the_same_ids(tmp_path):
    tok = build_tokenizer("word:6", Corpus())
    tok.save(tmp_path)
    again = load_tokenizer(tmp_path)
    assert again.kind == "word" and again.name == "word:6"
    assert again.encode(TEXT) == tok.encode(TEXT) and again.fingerprint == tok.fingerprint
    assert tokenizer_from_dict(tok.to_dict()).words == tok.words


@pytest.mark.parametrize("spec, words", [("word:x", "must be an integer"),
                                         ("word:0", "at least 1")])
def test_a_bad_size_is_refused_in_one_line(spec, words):
    with pytest.raises(DataError, match=words):
        build_tokenizer(spec, Corpus())


def test_it_needs_a_corpus():
    with pytest.raises(DataError, match="built from a corpus"):
        build_tokenizer("word:10")


def test_a_run_trains_on_word_tokens_and_keeps_its_tokenizer(tmp_path):
    import tfstudio
    from tfstudio.runs import RunFolder, TrainConfig
    from tfstudio.train.trainer import Trainer

    config = TrainConfig(corpus="sample", tokenizer="word:100", steps=1, batch_size=2,
                         seq_len=16, eval_every=1, eval_batches=1, warmup_steps=1)
    end = Trainer(tfstudio.load_graph("tiny-gpt"), config, run_dir=tmp_path).run()
    assert end.kind != "Failed", end
    tok = RunFolder(tmp_path).tokenizer()
    assert tok.kind == "word" and tok.ordinary_vocab_size == 100
    sample = load_corpus("sample").text()[:500]
    assert tok.encode(sample) == build_tokenizer("word:100", load_corpus("sample")).encode(sample)


def test_the_hugging_face_export_gives_the_same_ids():
    from tfstudio.export.hf_tokenizer import build_hf_tokenizer

    tok = build_tokenizer("word:5", Corpus())
    text = "The cat sat.  A dog ran!"
    assert build_hf_tokenizer(tok).encode(text).ids == tok.encode(text)
