"""The logit lens (tfstudio/probes/lens.py): its rows for each kind of model, the top tokens and
its refusals, recomputed here from the model's own head."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from probe_models import HEAD, STEM, TEXT, TOKENS, edited, graph_file, model_of, one_layer

from tfstudio.probes import probe_inputs
from tfstudio.probes.lens import logit_lens

torch.set_num_threads(1)


def test_the_lens_without_a_tokenizer_names_ids_and_keeps_no_logits(gpt, tokenizer):
    model, _ = gpt
    inputs = probe_inputs(model, tokenizer, "abc")   # fewer positions than k
    lens = logit_lens(model, inputs)   # k's default: the five likeliest
    ids = inputs.ids[inputs.stream_role]
    assert lens.tokens == [str(i) for i in ids] and lens.logits is None
    assert lens.top_ids.dtype == np.int64 and lens.top_ids.shape[-1] == 5
    assert lens.top_tokens[-1][0] == [str(i) for i in lens.top_ids[-1, 0]]
    with torch.no_grad():
        probs = torch.softmax(model(*inputs.args)[0], -1)
    np.testing.assert_array_equal(lens.top_ids[-1], probs.topk(5, -1).indices.numpy())


def test_the_lens_as_json(gpt, tokenizer):
    import json
    model, inputs = gpt
    lens = logit_lens(model, inputs, tokenizer, k=2)
    data = json.loads(json.dumps(lens.to_dict()))
    assert data == {"layers": lens.layers, "tokens": lens.tokens,
                    "top_ids": lens.top_ids.tolist(),
                    "top_probs": [[[float(p) for p in pos] for pos in layer]
                                  for layer in lens.top_probs],
                    "top_tokens": lens.top_tokens}
    assert data["layers"] == ["pos", "layers.0", "layers.1"]


def test_the_lens_of_a_one_layer_model(tokenizer):
    model = edited("tiny-gpt", tokenizer, one_layer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    lens = logit_lens(model, inputs, keep_logits=True)
    assert lens.layers == ["pos", "layers.0"]
    with torch.no_grad():
        np.testing.assert_allclose(lens.logits[-1], model(*inputs.args)[0].numpy(),
                                   rtol=1e-5, atol=1e-5)


def test_the_lens_needs_an_output_head(gpt):
    from tfstudio.probes.lens import residual_stream
    model, inputs = gpt
    saved = model.head
    try:
        model.head = torch.nn.Linear(64, 256)   # a plain projection, not an LM head
        with pytest.raises(ValueError) as caught:
            residual_stream(model, inputs)
    finally:
        model.head = saved
    assert str(caught.value) == "the model has no output head to read the stream through"


def lens_rows(model, tokenizer, text=TEXT):
    """The lens's row labels, and its last row checked against the model's own logits."""
    inputs = probe_inputs(model, tokenizer, text)
    lens = logit_lens(model, inputs, keep_logits=True)
    with torch.no_grad():
        np.testing.assert_allclose(lens.logits[-1], model(*inputs.args)[0].numpy(),
                                   rtol=1e-5, atol=1e-5)
    return lens.layers


def test_the_lens_of_a_model_whose_first_group_reads_the_ids(tokenizer):
    """A group holding the embedding is the first block to run: there is no stream before it to
    read (its input is the token ids), so the lens starts after it (it once sent the ids through
    the final norm and failed)."""
    model = graph_file([TOKENS, {"id": "stem", "type": "group", "params": {"repeat": 1},
                                 "subgraph": STEM},
                        {"id": "norm", "type": "norm", "params": {}}, HEAD],
                       [["tokens", "ids", "stem", "ids"], ["stem", "y", "norm", "x"],
                        ["norm", "y", "head", "x"]])
    assert lens_rows(model, tokenizer) == ["stem.0"]
    # a block after the group: no layers group ends the stream, so every top-level block
    # (there is no top-level embedding) is a row
    model = graph_file([TOKENS, {"id": "stem", "type": "group", "params": {"repeat": 1},
                                 "subgraph": STEM},
                        {"id": "ffn", "type": "feed_forward", "params": {"d_ff": 32}},
                        {"id": "norm", "type": "norm", "params": {}}, HEAD],
                       [["tokens", "ids", "stem", "ids"], ["stem", "y", "ffn", "x"],
                        ["ffn", "y", "norm", "x"], ["norm", "y", "head", "x"]])
    assert lens_rows(model, tokenizer) == ["stem.0", "ffn"]


def test_the_lens_rows_of_each_kind_of_model(tokenizer):
    assert lens_rows(model_of("tiny-lstm", tokenizer), tokenizer) == ["embed", "rnn"]
    assert lens_rows(model_of("tiny-llama", tokenizer), tokenizer) == [
        "embed", "layers.0", "layers.1"]        # the layers start right after the embedding
    # an encoder-decoder: the decoder's layers only (the encoder's run before them)
    assert lens_rows(model_of("tiny-t5", tokenizer), tokenizer) == [
        "tgt_pos", "decoder.0", "decoder.1"]


def test_the_lens_of_an_encoder_decoder_without_groups_reads_the_decoder(tokenizer):
    nodes = [{"id": "src", "type": "token_input", "params": {"role": "source"}},
             {"id": "src_embed", "type": "token_embedding", "params": {"d_model": 64}},
             {"id": "tgt", "type": "token_input", "params": {"role": "target"}},
             {"id": "tgt_embed", "type": "token_embedding", "params": {"d_model": 64}},
             {"id": "cross", "type": "cross_attention", "params": {"heads": 4}},
             {"id": "norm", "type": "norm", "params": {}},
             {"id": "head", "type": "seq2seq_head", "params": {"vocab_size": 256, "tie": False}}]
    edges = [["src", "ids", "src_embed", "ids"], ["tgt", "ids", "tgt_embed", "ids"],
             ["tgt_embed", "y", "cross", "x"], ["src_embed", "y", "cross", "memory"],
             ["cross", "y", "norm", "x"], ["norm", "y", "head", "x"]]
    model = graph_file(nodes, edges)
    assert model.family == "encoder-decoder"
    # rows from the last embedding (the target's): the source has another length
    assert lens_rows(model, tokenizer, "abcdefgh>xyz") == ["tgt_embed", "cross"]
