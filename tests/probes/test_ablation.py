"""Ablation (tfstudio/probes/ablation.py): the targets it reads and refuses, the effect it reports
and the loss it compares, recomputed here from the model's own logits."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from probe_models import TEXT, block_of, model_of

from tfstudio.probes import probe_inputs
from tfstudio.probes.ablation import Target, ablated, ablation_effect, text_loss
import json
import tfstudio
from tfstudio.cli import main
from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.probes.ablation import ablated, ablation_effect
from tfstudio.runs import TrainConfig
from tfstudio.train.trainer import Trainer

torch.set_num_threads(1)


def refusal(model, inputs, target) -> str:
    with pytest.raises(ValueError) as caught:
        ablation_effect(model, inputs, [target])
    return str(caught.value)


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


def _zeroed(model, *linears):
    """A copy of ``model`` whose named Linear weights (and biases) are zero (the head's W_o
    columns, or a whole output projection): the ablation written into the weights."""
    twin = copy.deepcopy(model)
    with torch.no_grad():
        for name, columns in linears:
            layer = twin.get_submodule(name)
            layer.weight[:, columns].zero_()
            if columns == slice(None) and layer.bias is not None:
                layer.bias.zero_()
    return twin


@pytest.mark.parametrize("preset,target,point,linears", [
    ("tiny-gpt", "layers.1.attn:head=2", "layers.1.attn.hook_mixed",
     [("layers.1.attn.out", slice(32, 48))]),        # head 2 of 4, d_head 16
    ("tiny-gpt", "layers.0.attn", "layers.0.attn.hook_out", [("layers.0.attn.out", slice(None))]),
    ("tiny-gpt", "layers.1.ffn", "layers.1.ffn.hook_out", [("layers.1.ffn.down", slice(None))]),
    ("tiny-mixtral", "layers.0.moe:expert=1", "layers.0.moe.experts.1.hook_out",
     [("layers.0.moe.experts.1.down", slice(None))]),
])
def test_switching_off_at_a_hook_point_equals_zeroing_its_weights(preset, target, point,
                                                                   linears, tokenizer):
    model = model_of(preset, tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    if "head" in target:
        assert block_of(model, "layers.1.attn").head_dim == 16
    with torch.no_grad():
        plain = model(*inputs.args)
        with ablated(model, [target]):
            assert model.get_submodule(point).fns   # switched off where the model computes it
            cut = model(*inputs.args)
        twin = _zeroed(model, *linears)(*inputs.args)
        again = model(*inputs.args)
    np.testing.assert_allclose(cut.numpy(), twin.numpy(), atol=1e-6, rtol=0)
    assert (cut - plain).abs().max() > 1e-3        # it did switch something off
    assert torch.equal(again, plain)                 # and the model is itself again after


# Moved from test_ablation_spans.py: Ablation scored where it matters: on a task's answer tokens (as training scores them) and on
# any span the user picks, each labelled, beside the loss on the whole text.
def test_span_loss_is_the_cross_entropy_of_those_tokens_alone():
    torch.manual_seed(0)
    tokenizer = build_tokenizer("byte")
    model = compile_graph(tfstudio.load_graph("tiny-gpt")).eval()
    inputs = probe_inputs(model, tokenizer, "abcdef>fedcba")
    effect = ablation_effect(model, inputs, ["layers.0.attn"], tokenizer, span=(7, 13),
                             span_label="the answer tokens")
    ids = torch.tensor(inputs.ids[inputs.stream_role])
    with torch.no_grad():
        for logits, want in ((model(ids[None])[0], effect.span_loss_before),):
            logp = torch.log_softmax(logits.double(), -1)
            assert want == pytest.approx(-logp[6:12].gather(1, ids[7:13, None]).mean().item(),
                                         abs=1e-5)
        with ablated(model, ["layers.0.attn"]):
            logp = torch.log_softmax(model(ids[None])[0].double(), -1)
    assert effect.span_loss_after == pytest.approx(
        -logp[6:12].gather(1, ids[7:13, None]).mean().item(), abs=1e-5)
    assert effect.to_dict()["span"]["label"] == "the answer tokens"
    with pytest.raises(ValueError, match="must lie within token positions 1..13"):
        ablation_effect(model, inputs, ["layers.0.attn"], span=(0, 3))


@pytest.fixture(scope="module")
def task_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("ablate") / "run"
    cfg = TrainConfig(corpus="task:reverse", tokenizer="byte", steps=3, batch_size=4,
                      eval_every=100, warmup_steps=1)
    assert Trainer(tfstudio.load_graph("tiny-gpt"), cfg, run_dir=path).run().kind == "Finished"
    return path


@pytest.mark.slow  # a short training and two full explain reports
def test_explain_scores_a_task_ablation_on_its_answer_tokens(capsys, task_run):
    assert main(["explain", str(task_run), "--text", "abcd>dcba", "--ablate",
                 "layers.0.attn", "--json", "--no-values"]) == 0
    span = json.loads(capsys.readouterr().out)["ablation"]["span"]
    assert (span["start"], span["end"], span["label"]) == (5, 9, "the answer tokens")
    assert main(["explain", str(task_run), "--text", "abcd>dcba", "--ablate",
                 "layers.0.attn"]) == 0
    out = capsys.readouterr().out
    assert "loss on the text" in out and "loss on the answer tokens (positions 5-8)" in out


@pytest.mark.slow  # two full explain reports
def test_explain_scores_a_span_the_user_picks_on_any_text(capsys):
    assert main(["explain", "tiny-gpt", "--text", "once upon a time", "--ablate",
                 "layers.1.ffn", "--score-span", "5:9"]) == 0
    assert "loss on your --score-span tokens (positions 5-8)" in capsys.readouterr().out
    assert main(["explain", "tiny-gpt", "--text", "once", "--ablate", "layers.1.ffn",
                 "--score-span", "x"]) == 2
    assert "--score-span takes token positions A:B" in capsys.readouterr().err
