"""Probe snapshots (tfstudio/probes/snapshot.py): what a snapshot holds, the store's refusals and
its latest, and what a run probes."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from probe_models import model_of, trained

from tfstudio.data import build_tokenizer
from tfstudio.data.corpus import load_corpus
from tfstudio.probes import default_probe_text

torch.set_num_threads(1)


def test_a_snapshot_holds_what_the_views_draw(gpt, tokenizer):
    from tfstudio.probes import take_snapshot
    model, _ = gpt
    snap = take_snapshot(model, tokenizer, "abcab")
    assert sorted(snap) == ["activation_rms", "attention", "experts", "family", "grad_norm",
                            "ids", "next_token_logits", "positions", "step", "text",
                            "tokens", "walk"]
    assert snap["step"] == 0 and snap["family"] == "decoder" and snap["text"] == "abcab"
    assert snap["ids"]["tokens"].tolist() == tokenizer.encode("abcab")
    with torch.no_grad():
        logits = model(torch.tensor([tokenizer.encode("abcab")]))
    np.testing.assert_allclose(snap["next_token_logits"], logits[0, -1].numpy(), rtol=1e-5,
                               atol=1e-6)
    # the positions view: a learned table with all its rows, its similarity the text's length
    learned = snap["positions"]["learned"]
    assert learned["table"].shape == (256, 64) and learned["similarity"].shape == (5, 5)
    # the Explain view: the walk at the last token, each step as its small picture, in order
    walk = snap["walk"]
    assert (walk["position"], walk["head"], walk["stream_role"]) == (4, 0, "tokens")
    steps = [walk["steps"][k] for k in sorted(walk["steps"])]
    assert sorted(walk["steps"]) == [f"{i:03d}" for i in range(len(steps))]
    assert steps[0]["name"] == "embed: token ids"
    assert steps[0]["picked"].tolist() == [tokenizer.encode("abcab")[4]]
    last = steps[-1]       # the sampler's distribution (no filter by default): the top 15
    assert last["name"] == "probabilities at position 4, no filter (top-k and top-p off)"
    row = logits[0, -1].double().numpy()
    p = np.exp(row - row.max()) / np.exp(row - row.max()).sum()
    top = np.argsort(-p, kind="stable")[:15]
    assert last["top_ids"].tolist() == top.tolist()
    np.testing.assert_allclose(last["top_values"], p[top], rtol=1e-5, atol=1e-7)
    assert last["others"] == pytest.approx(1 - p[top].sum(), abs=1e-6)
    assert last["top_tokens"] == tokenizer.token_strings(top.tolist())


def test_an_encoder_decoder_snapshot_splits_at_the_separator(tokenizer):
    from tfstudio.probes import take_snapshot
    from tfstudio.probes.snapshot import shown_positions
    t5 = model_of("tiny-t5", tokenizer)
    enc = tokenizer.encode
    snap = take_snapshot(t5, tokenizer, "abc>d")
    assert snap["ids"]["source"].tolist() == enc("abc")
    bar = take_snapshot(t5, tokenizer, "ab|c>d", separator="|")
    assert bar["ids"]["source"].tolist() == enc("ab")
    assert snap["positions"]["sinusoidal"]["table"].shape == (3, 64)   # the longer stream
    assert shown_positions(t5, 16)["sinusoidal"]["table"].shape == (16, 64)


def test_the_snapshot_store_refusals_and_its_latest(tmp_path):
    from tfstudio.probes import SnapshotStore
    store = SnapshotStore(tmp_path / "new" / "run")      # no folder yet: save makes it
    assert store.latest() is None and store.steps() == []
    with pytest.raises(FileNotFoundError) as caught:
        store.load(3)
    assert str(caught.value) == f"{store.path(3)}: no snapshot of step 3 in this run"
    for step in (5, 2, 3):
        store.save({"step": step, "value": np.float32(step / 2), "nested": {"x": np.ones(2)}})
    latest = store.latest()
    assert latest["step"] == 5 and latest["value"] == 2.5
    np.testing.assert_array_equal(latest["nested"]["x"], np.ones(2))
    with pytest.raises(ValueError) as caught:
        store.save({"step": 1, "a/b": 1})
    assert str(caught.value) == "snapshot key 'a/b' may not contain '/'"
    store.path(7).write_bytes(b"not a zip file")
    with pytest.raises(ValueError) as caught:
        store.load(7)
    message = str(caught.value)
    assert message.startswith(f"{store.path(7)} is not a readable probe snapshot (")
    assert message.endswith("); it may be damaged: delete it and the view skips that step")


def test_a_run_probes_its_tasks_default_example_split_at_the_tasks_separator(tmp_path):
    from tfstudio.probes import SnapshotStore, snapshot_for_run
    trainer = trained("tiny-t5", tmp_path, corpus="task:add")
    text = default_probe_text(load_corpus("task:add"))
    source, target = text.split("=")                    # the add task's separator
    snap = snapshot_for_run(trainer)
    enc = trainer.tokenizer.encode
    assert snap["text"] == text and snap["ids"]["source"].tolist() == enc(source)
    assert snap["ids"]["target"].tolist() == [trainer.tokenizer.bos_id] + enc(target)
    assert snap["step"] == 1
    assert SnapshotStore(trainer.run_folder.path).steps() == [1]     # the main writer saves
    # the positions view: the run's sequence length, not the probe text's
    assert snap["positions"]["sinusoidal"]["table"].shape == (32, 64)
    # the default text is worked out once and kept
    trainer._default_probe_text = "xy=z"
    assert snapshot_for_run(trainer)["text"] == "xy=z"
    trainer.config.probe_text = "a" * 80     # no separator: halves of 40, cut to seq_len 32
    assert len(snapshot_for_run(trainer)["ids"]["source"]) == 32
    store = SnapshotStore(trainer.run_folder.path)
    store.path(1).unlink()
    trainer.session.metrics_log = None   # not the writing process: nothing is saved
    snapshot_for_run(trainer)
    assert store.steps() == []


def test_a_typed_probe_text_splits_at_the_default_separator_when_the_task_has_none(tmp_path):
    from tfstudio.probes import snapshot_for_run
    enc = build_tokenizer("byte").encode
    for corpus in ("task:induction", "sample"):          # an empty separator; no task at all
        trainer = trained("tiny-t5", tmp_path / corpus.replace(":", "_"), corpus=corpus,
                          probe_text="abc>d")
        snap = snapshot_for_run(trainer)
        assert snap["ids"]["source"].tolist() == enc("abc"), corpus
