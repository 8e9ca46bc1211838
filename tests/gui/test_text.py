"""How refusals read on screen (gui/text.py): an exception's words as one sentence."""
from tfstudio.gui.text import sentence


def test_a_refused_edit_reads_as_a_sentence_without_the_quotes_a_key_error_adds():
    missing = KeyError("no block 'attn' here")
    assert str(missing) == '"no block \'attn\' here"'               # what str() would show
    assert sentence(missing) == "No block 'attn' here"
    assert sentence(ValueError("heads must divide d_model")) == "Heads must divide d_model"
    assert sentence(ValueError("Already a sentence.")) == "Already a sentence."
    assert sentence(KeyError()) == ""                               # no words: none made up
