"""The logit lens (tfstudio/probes/lens.py): its rows for each kind of model, the top tokens and
its refusals, recomputed here from the model's own head."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from probe_models import HEAD, STEM, TEXT, TOKENS, edited, graph_file, model_of, one_layer

from tfstudio.probes import probe_inputs
from tfstudio.probes.lens import logit_lens
import copy
import math
import torch.nn.functional as F
from tfstudio.probes.ablation import ablated, ablation_effect, parse_target
from probe_models import TEXT, model_of

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


# Moved from test_probes_lens_ablation.py: The logit lens reads the stream through the model's own read-out (its last row is the model's
# output); ablations remove exactly the part they name, checked against weight surgery on a copy
# and against the head's contribution computed by hand.
# ---------------------------------------------------------------------------- logit lens
@pytest.mark.parametrize("preset,rows", [
    ("tiny-gpt", ["pos", "layers.0", "layers.1"]),
    ("tiny-llama", ["embed", "layers.0", "layers.1"]),
    ("tiny-mixtral", ["embed", "layers.0", "layers.1"]),
    ("tiny-t5", ["tgt_pos", "decoder.0", "decoder.1"]),  # its sinusoids, as tiny-gpt's pos
    ("tiny-lstm", ["embed", "rnn"]),
])
def test_lens_last_row_is_the_models_output(preset, rows, tokenizer):
    model = model_of(preset, tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    with torch.no_grad():
        expected = model(*inputs.args)[0]
    lens = logit_lens(model, inputs, tokenizer, k=3, keep_logits=True)
    assert lens.layers == rows
    np.testing.assert_allclose(lens.logits[-1], expected.numpy(), atol=1e-5)
    probs = torch.softmax(expected, -1)
    top_p, top_i = probs.topk(3, -1)
    np.testing.assert_array_equal(lens.top_ids[-1], top_i.numpy())
    np.testing.assert_allclose(lens.top_probs[-1], top_p.numpy(), atol=1e-6)
    assert lens.top_tokens[-1][0][0] == tokenizer.token_strings([int(top_i[0, 0])])[0]
    assert len(lens.tokens) == expected.shape[0]


def test_lens_first_row_is_the_embedding_through_the_readout(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    ids = torch.tensor(inputs.ids["tokens"])
    x = model.embed.weight[ids] + model.pos.table.weight[:len(ids)]
    norm = model.final_norm
    y = F.layer_norm(x, (x.shape[-1],), norm.weight, norm.bias, norm.eps)
    logits = y @ model.embed.weight.T  # the head is tied to the embedding
    lens = logit_lens(model, inputs, tokenizer, keep_logits=True)
    np.testing.assert_allclose(lens.logits[0], logits.detach().numpy(), atol=1e-5)


# ---------------------------------------------------------------------------- ablation
def test_ablating_a_head_removes_exactly_its_contribution(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    attn = model.layers[1].attn
    seen = {}

    def keep(module, args, out):  # returns None: the output is left as it is
        seen[len(seen)] = (args[0], out)
    hook = attn.register_forward_hook(keep)
    with torch.no_grad():
        model(*inputs.args)
        with ablated(model, ["layers.1.attn:head=2"]):
            model(*inputs.args)
    hook.remove()
    (x, full), (x2, cut) = seen[0], seen[1]
    assert torch.equal(x, x2)  # layer 0 is untouched, so layer 1 reads the same stream
    # head 2's term written out: softmax(q k^T / sqrt(d) + causal) v W_o[:, head 2 columns]
    H, hd, T = attn.heads, attn.head_dim, x.shape[1]
    qkv = x[0] @ attn.qkv.weight.T + attn.qkv.bias
    q, k, v = (qkv[:, (part * H + 2) * hd:(part * H + 3) * hd] for part in range(3))
    s = q @ k.T / math.sqrt(hd) + torch.triu(torch.full((T, T), -math.inf), 1)
    term = torch.softmax(s, -1) @ v @ attn.out.weight[:, 2 * hd:3 * hd].T
    np.testing.assert_allclose((full - cut)[0].detach().numpy(), term.detach().numpy(),
                               atol=1e-5)


def surgery(model, edit):
    twin = copy.deepcopy(model)
    with torch.no_grad():
        edit(twin)
    return twin


@pytest.mark.parametrize("target,edit", [
    ("layers.0.attn:head=1",
     lambda m: m.layers[0].attn.out.weight[:, 16:32].zero_()),
    ("layers.1.ffn",
     lambda m: (m.layers[1].ffn.down.weight.zero_(), m.layers[1].ffn.down.bias.zero_())),
    ("layers.0.attn",
     lambda m: (m.layers[0].attn.out.weight.zero_(), m.layers[0].attn.out.bias.zero_())),
])
def test_ablation_effect_equals_weight_surgery(target, edit, tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    effect = ablation_effect(model, inputs, [target], tokenizer, position=-1)
    twin = surgery(model, edit)
    with torch.no_grad():
        plain, cut = model(*inputs.args)[0], twin(*inputs.args)[0]
    np.testing.assert_allclose(effect.logits_after, cut.numpy(), atol=1e-5)
    np.testing.assert_allclose(effect.logits_before, plain.numpy(), atol=1e-6)
    ids = torch.tensor(inputs.ids["tokens"])
    assert effect.loss_before == pytest.approx(float(F.cross_entropy(plain[:-1], ids[1:])),
                                               abs=1e-5)
    assert effect.loss_after == pytest.approx(float(F.cross_entropy(cut[:-1], ids[1:])),
                                              abs=1e-5)
    p, q = torch.softmax(plain[-1], -1), torch.softmax(cut[-1], -1)
    assert effect.kl == pytest.approx(float((p * (p / q).log()).sum()), abs=1e-5)
    assert effect.kl > 0
    assert effect.top_after[0][1] == pytest.approx(float(q.max()), abs=1e-6)
    # the hooks are gone: the model computes as before
    with torch.no_grad():
        assert torch.equal(model(*inputs.args)[0], plain)


def test_ablating_an_expert_equals_zeroing_its_weights(tokenizer):
    model = model_of("tiny-mixtral", tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    effect = ablation_effect(model, inputs, ["layers.0.moe:expert=1"], tokenizer)
    twin = surgery(model, lambda m: m.layers[0].moe.experts[1].down.weight.zero_())
    with torch.no_grad():
        cut = twin(*inputs.args)[0]
    np.testing.assert_allclose(effect.logits_after, cut.numpy(), atol=1e-5)
    assert not np.allclose(effect.logits_after, effect.logits_before)


@pytest.mark.parametrize("text,match", [
    ("layers.0.norm_attn", "not an attention, feed-forward or MoE block"),
    ("nothing", "choose one of"),
    ("layers.0.attn:head=7", "heads 0..3"),
    ("layers.0.ffn:head=1", "has no heads"),
    ("layers.0.attn:experts=1", "cannot read the ablation target"),
])
def test_bad_targets_are_refused_with_the_fix(text, match, tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    with pytest.raises(ValueError, match=match):
        ablation_effect(model, inputs, [text])
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())


def test_target_text_round_trips():
    for text in ("layers.0.attn:head=1", "layers.1.moe:expert=3", "layers.1.ffn"):
        assert str(parse_target(text)) == text
