"""Direct tests written for the survivors of mutation testing (bench/mutation.py) over the
ablation, logit-lens and routing probes: the exact refusals, the edges of every range, the
loss and the top tokens recomputed here from the model's own logits."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tfstudio.data import build_tokenizer
from tfstudio.probes import expert_routing, probe_inputs
from tfstudio.probes.ablation import Target, ablation_effect, parse_target, text_loss
from tfstudio.probes.lens import logit_lens

from probe_models import TEXT, model_of

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer("byte")


@pytest.fixture(scope="module")
def gpt(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    return model, probe_inputs(model, tokenizer, TEXT)


def block_of(model, name: str):
    return {".".join(map(str, k)): m for k, m in model.blocks()}[name]


def refusal(model, inputs, target) -> str:
    with pytest.raises(ValueError) as caught:
        ablation_effect(model, inputs, [target])
    return str(caught.value)


# ---------------------------------------------------------------- ablation targets
def test_an_unreadable_target_is_refused_with_the_forms_it_may_take(gpt):
    for text in ("layers.0.attn:head=x", "layers.0.attn:head", "layers.0.attn:head=1=2"):
        assert refusal(*gpt, text) == (
            f"cannot read the ablation target {text!r}; write BLOCK, BLOCK:head=H or "
            "BLOCK:expert=E (e.g. layers.0.attn:head=1)")


def test_an_unknown_block_is_refused_with_the_blocks_there_are(gpt, tokenizer):
    model, inputs = gpt
    assert refusal(model, inputs, "layers.0.norm_attn") == (
        "'layers.0.norm_attn' is not an attention, feed-forward or MoE block of this model; "
        "choose one of layers.0.attn, layers.0.ffn, layers.1.attn, layers.1.ffn")
    lstm = model_of("tiny-lstm", tokenizer)
    assert refusal(lstm, probe_inputs(lstm, tokenizer, TEXT), "rnn") == (
        "'rnn' is not an attention, feed-forward or MoE block of this model; this model has "
        "none to switch off (a recurrent model has no sublayers)")


def test_every_head_can_be_switched_off_and_no_other(gpt):
    model, inputs = gpt
    heads = block_of(model, "layers.0.attn").heads
    for head in (0, heads - 1):
        ablation_effect(model, inputs, [f"layers.0.attn:head={head}"])
    assert refusal(model, inputs, f"layers.0.attn:head={heads}") == (
        f"layers.0.attn has heads 0..{heads - 1}, not {heads}")


def test_every_expert_can_be_switched_off_and_no_other(tokenizer):
    model = model_of("tiny-mixtral", tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    n = block_of(model, "layers.0.moe").num_experts
    for expert in (0, n - 1):
        ablation_effect(model, inputs, [f"layers.0.moe:expert={expert}"])
    assert refusal(model, inputs, f"layers.0.moe:expert={n}") == (
        f"layers.0.moe has experts 0..{n - 1}, not {n}")
    assert refusal(model, inputs, "layers.0.attn:expert=0") == (
        "layers.0.attn is not a mixture of experts")


# ---------------------------------------------------------------- the effect
def test_the_effect_reports_what_it_compared(gpt, tokenizer):
    model, inputs = gpt
    T = len(inputs.ids[inputs.stream_role])
    effect = ablation_effect(model, inputs, [" layers.0.attn:head=1 ", Target("layers.1.ffn")])
    assert effect.targets == ["layers.0.attn:head=1", "layers.1.ffn"]
    assert effect.position == T - 1
    before = torch.log_softmax(torch.tensor(effect.logits_before[T - 1]), -1)
    probs, ids = before.exp().topk(5)       # k's default: five tokens
    assert [name for name, _ in effect.top_before] == [str(i) for i in ids.tolist()]
    np.testing.assert_allclose([p for _, p in effect.top_before], probs.numpy(), rtol=1e-5)
    named = ablation_effect(model, inputs, ["layers.1.ffn"], tokenizer=tokenizer, k=2)
    assert [name for name, _ in named.top_before] == tokenizer.token_strings(ids[:2].tolist())


def test_the_compared_position_may_be_any_of_the_text(gpt):
    model, inputs = gpt
    T = len(inputs.ids[inputs.stream_role])
    assert ablation_effect(model, inputs, ["layers.1.ffn"], position=-T).position == 0
    assert ablation_effect(model, inputs, ["layers.1.ffn"], position=T - 1).position == T - 1
    for outside in (T, -T - 1):
        with pytest.raises(ValueError) as caught:
            ablation_effect(model, inputs, ["layers.1.ffn"], position=outside)
        assert str(caught.value) == f"position {outside} is outside the text's {T} tokens"


def test_the_text_loss_of_a_decoder_and_of_an_encoder(gpt, tokenizer):
    model, inputs = gpt
    ids = inputs.ids[inputs.stream_role]
    with torch.no_grad():
        logits = model(*inputs.args)
    expected = F.cross_entropy(logits[0, :-1], torch.tensor(ids[1:]))  # next tokens
    assert text_loss(model, inputs, logits) == pytest.approx(float(expected), rel=1e-6)
    short = probe_inputs(model, tokenizer, "ab")
    with torch.no_grad():
        two = model(*short.args)
    assert text_loss(model, short, two) == pytest.approx(
        float(F.cross_entropy(two[0, :1], torch.tensor(short.ids["tokens"][1:]))), rel=1e-6)
    one = probe_inputs(model, tokenizer, "a")
    with torch.no_grad():
        assert np.isnan(text_loss(model, one, model(*one.args)))   # no next token to predict
    bert = model_of("tiny-bert", tokenizer)
    b_inputs = probe_inputs(bert, tokenizer, TEXT)
    with torch.no_grad():
        b_logits = bert(*b_inputs.args)
    own = F.cross_entropy(b_logits[0], torch.tensor(b_inputs.ids[b_inputs.stream_role]))
    assert text_loss(bert, b_inputs, b_logits) == pytest.approx(float(own), rel=1e-6)


# ---------------------------------------------------------------- the logit lens
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


# ---------------------------------------------------------------- routing
def test_routing_gives_each_blocks_load_assignments_and_expert_count(tokenizer):
    model = model_of("tiny-mixtral", tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    with torch.no_grad():
        model(*inputs.args)
    routing = expert_routing(model)
    assert sorted(routing) == ["layers.0.moe", "layers.1.moe"]
    moe = block_of(model, "layers.0.moe")
    block = routing["layers.0.moe"]
    assert block["experts"] == moe.num_experts
    assert block["assignments"].dtype == np.int64
    T = len(inputs.ids[inputs.stream_role])
    counts = np.bincount(block["assignments"].ravel(), minlength=moe.num_experts)
    np.testing.assert_allclose(block["load"], counts / T, rtol=1e-6)  # shares, sum top_k


def test_the_effect_as_json(gpt):
    import json
    model, inputs = gpt
    effect = ablation_effect(model, inputs, ["layers.0.attn:head=1"], k=2)
    data = json.loads(json.dumps(effect.to_dict()))
    assert data == {
        "targets": ["layers.0.attn:head=1"], "position": effect.position,
        "loss_before": effect.loss_before, "loss_after": effect.loss_after,
        "loss_change": effect.loss_after - effect.loss_before, "kl": effect.kl,
        "top_before": [list(t) for t in effect.top_before],
        "top_after": [list(t) for t in effect.top_after]}
    assert data["loss_change"] != 0 and data["kl"] > 0  # switching a head off changed both


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


def test_an_attention_map_round_trips_through_plain_data(tokenizer):
    """The snapshot file stores each map as plain lists (JSON): reading it back gives the same
    weights, mask, roles and cross flag."""
    import json
    from tfstudio.probes import attention_maps
    from tfstudio.probes.attention import AttentionMap
    model = model_of("tiny-t5", tokenizer)
    maps = attention_maps(model, probe_inputs(model, tokenizer, TEXT))
    assert any(m.cross for m in maps.values()) and not all(m.cross for m in maps.values())
    for name, original in maps.items():
        data = {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                for k, v in original.to_dict().items()}
        assert sorted(data) == ["allowed", "cross", "key_role", "query_role", "weights"]
        back = AttentionMap.from_dict(json.loads(json.dumps(data)))
        np.testing.assert_allclose(back.weights, original.weights, rtol=1e-6)
        assert original.allowed.dtype == bool and back.allowed.dtype == bool
        np.testing.assert_array_equal(back.allowed, original.allowed)
        assert (back.query_role, back.key_role, back.cross) == (
            original.query_role, original.key_role, original.cross)
        assert type(back.cross) is bool and type(back.query_role) is str
