"""The logit lens reads the stream through the model's own read-out (its last row is the model's
output); ablations remove exactly the part they name, checked against weight surgery on a copy
and against the head's contribution computed by hand."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tfstudio.probes import probe_inputs
from tfstudio.probes.ablation import ablated, ablation_effect, parse_target
from tfstudio.probes.lens import logit_lens

from probe_models import TEXT, model_of

torch.set_num_threads(1)


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
