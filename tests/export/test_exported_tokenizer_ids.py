"""An exported tokenizer's special ids, read back through ``transformers.AutoTokenizer`` (what a
Hugging Face user's ``generate`` stops and pads on): end-of-text, beginning and padding keep the
ids tfstudio trained with, and the model's config.json agrees with the tokenizer."""
import json

import pytest

from tfstudio.data import build_tokenizer, load_corpus


@pytest.fixture(scope="module")
def corpus():
    return load_corpus("sample:small")


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["byte", "char"])
def test_special_ids_read_back_through_auto_tokenizer(tmp_path, corpus, spec):
    from tfstudio.export.hf_tokenizer import export_files

    tokenizer = build_tokenizer(spec, corpus)
    export_files(tokenizer, tmp_path, 64)
    import transformers  # a second of import: here, not at collection
    hf = transformers.AutoTokenizer.from_pretrained(tmp_path)
    ids = tokenizer.specials
    assert (hf.eos_token_id, hf.bos_token_id, hf.pad_token_id) == (
        ids["<|endoftext|>"], ids["<|bos|>"], ids["<|pad|>"])
    # the three differ, so a swap of any two would show above
    assert len({hf.eos_token_id, hf.bos_token_id, hf.pad_token_id}) == 3
    assert hf.decode([ids["<|endoftext|>"]]) == "<|endoftext|>"


def test_an_exported_model_stops_on_the_tokenizers_end_of_text(tmp_path, corpus):
    from tfstudio.export.hf_export import export_hf

    from tfstudio.presets import load_preset

    tokenizer = build_tokenizer("byte", corpus)
    graph = load_preset("tiny-gpt")
    for _, node in graph.walk():  # rows for the specials too (the preset has the 256 bytes)
        if "vocab_size" in node.params:
            node.params["vocab_size"] = tokenizer.vocab_size
    export_hf(graph, tmp_path / "hf", tokenizer=tokenizer)
    import transformers  # a second of import: here, not at collection
    hf = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["eos_token_id"] == hf.eos_token_id == 256
    assert config["pad_token_id"] == hf.pad_token_id == 257
