"""``tfstudio explain``: the JSON carries the real tensors (checked against the model rebuilt
here), the text summary reads, and user errors are one line with exit status 2."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import tfstudio
from tfstudio.cli import main
from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.presets import load_preset
from tfstudio.runs import RunFolder, TrainConfig
from tfstudio.train.pipeline import fit_graph_to_tokenizer
from tfstudio.train.trainer import Trainer

torch.set_num_threads(1)


def explain(capsys, *argv) -> tuple[int, str, str]:
    code = main(["explain", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("explain") / "run"
    cfg = TrainConfig(corpus="task:copy", tokenizer="byte", steps=4, batch_size=4,
                      eval_every=100, log_every=2, warmup_steps=1)
    end = Trainer(tfstudio.load_graph("tiny-gpt"), cfg, run_dir=path).run()
    assert end.kind == "Finished"
    return path


def test_json_of_a_preset_holds_the_models_own_numbers(capsys):
    code, out, err = explain(capsys, "tiny-llama", "--text", "abcabc", "--head", "1",
                             "--json", "--seed", "3")
    assert code == 0, err
    report = json.loads(out)
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(3)
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-llama"), tokenizer)).eval()
    ids = tokenizer.encode("abcabc")
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0]
    steps = {s["name"]: s for s in report["walk"]}
    np.testing.assert_allclose(steps["head: logits"]["values"], logits.numpy(), atol=1e-5)
    assert steps["head: logits"]["shape"] == [6, tokenizer.vocab_size]
    assert steps["layers.0.attn: head 1: q rotated (RoPE)"]["formula"]
    # masked scores never leak as -inf: the mask is its own boolean step
    assert steps["layers.0.attn: head 1: mask"]["values"][0] == [True] + [False] * 5
    assert report["tokens"]["tokens"] == list("abcabc") and report["position"] == 5
    lens = report["logit_lens"]
    assert lens["layers"] == ["embed", "layers.0", "layers.1"]
    assert lens["top_ids"][-1][5][0] == int(logits[5].argmax())
    assert set(report["head_scores"]["blocks"]) == {"layers.0.attn", "layers.1.attn"}
    assert len(report["head_scores"]["blocks"]["layers.0.attn"]["induction"]) == 4
    emb = report["embeddings"]
    assert emb["token"]["text"] == "c" and len(emb["token"]["neighbours"]) == 5
    assert emb["position_angles"] is None  # RoPE adds no position vectors


def test_run_folder_layer_and_head_choice_and_ablation(capsys, run_dir):
    code, out, err = explain(capsys, str(run_dir), "--layer", "1", "--head", "2", "--json",
                             "--no-values", "--ablate", "layers.1.attn:head=2", "--replay")
    assert code == 0, err
    report = json.loads(out)
    names = [s["name"] for s in report["walk"]]
    assert "layers.1.attn: head 2: softmax" in names
    assert not [n for n in names if n.startswith("layers.0.attn: head")]
    assert all("values" not in s for s in report["walk"])
    assert report["text"]  # the task's example stands in for a missing --text
    assert report["ablation"]["targets"] == ["layers.1.attn:head=2"]
    assert report["ablation"]["kl"] >= 0
    assert [r["step"] for r in report["embeddings"]["replay"]] == [4]
    model = RunFolder(run_dir).load_model()
    assert report["origin"] == f"run {run_dir}" and model.family == report["family"]


def test_text_summary(capsys, run_dir):
    code, out, err = explain(capsys, str(run_dir), "--text", "hello hello", "--position", "7",
                             "--compare", "oh hello", "--top-k", "3")
    assert code == 0, err
    for part in ("Forward pass", "layers.0.attn: head 0: scores", "Next token:",
                 "Logit lens", "Head scores", "cosine per layer", "token embedding      1.0000",
                 "position 7 is 'e'"):
        assert part in out, part


@pytest.mark.parametrize("argv,match", [
    (["no-such-preset"], "no preset named 'no-such-preset'"),
    (["tiny-gpt", "--head", "9"], "head 9 does not exist"),
    (["tiny-gpt", "--text", "abc", "--position", "7"], "position 7 is outside"),
    (["tiny-gpt", "--layer", "5"], "layer 5 has no attention"),
    (["tiny-gpt", "--ablate", "layers.0.norm_attn"], "not an attention, feed-forward or MoE"),
    (["tiny-gpt", "--text", "abc", "--compare", "xyz"], "does not occur in the --compare"),
    (["tiny-gpt", "--text", "   "], "argument --text: takes some text; got '   '"),
    (["tiny-gpt", "--top-p", "0"], "argument --top-p: takes a number from"),
])
def test_user_errors_are_one_line_and_exit_2(capsys, argv, match):
    code, out, err = explain(capsys, *argv)
    assert code == 2
    assert err.startswith("tfstudio explain: ") and match in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert out == ""


def test_a_folder_that_is_not_a_run(capsys, tmp_path):
    code, _, err = explain(capsys, str(tmp_path))
    assert code == 2 and "is not a run folder" in err and err.count("\n") == 1
