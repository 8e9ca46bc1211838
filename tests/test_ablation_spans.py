"""Ablation scored where it matters: on a task's answer tokens (as training scores them) and on
any span the user picks, each labelled, beside the loss on the whole text."""
from __future__ import annotations

import json

import pytest
import torch

import tfstudio
from tfstudio.cli import main
from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.probes import probe_inputs
from tfstudio.probes.ablation import ablated, ablation_effect
from tfstudio.runs import TrainConfig
from tfstudio.train.trainer import Trainer


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
