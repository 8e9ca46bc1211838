"""Embedding read-outs against direct computations: PCA from the covariance's eigenvectors,
neighbours by a brute-force cosine loop, per-layer cosines from forward hooks placed here, the
replay against each checkpoint loaded by hand."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tfstudio
from tfstudio.compiler import compile_graph
from tfstudio.presets import load_preset
from tfstudio.probes import probe_inputs
from tfstudio.probes.embeddings import (embedding_map, embedding_replay, position_angles,
                                        token_through_layers)
from tfstudio.runs import RunFolder, TrainConfig, load_checkpoint
from tfstudio.train.pipeline import fit_graph_to_tokenizer
from tfstudio.train.trainer import Trainer

torch.set_num_threads(1)


def model_of(preset: str, tokenizer, seed: int = 0):
    torch.manual_seed(seed)
    return compile_graph(fit_graph_to_tokenizer(load_preset(preset), tokenizer)).eval()


def test_pca_and_neighbours_match_a_direct_computation(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    ids = tokenizer.encode("abcdefghijklmnopqrstuvwxyz .,")
    result = embedding_map(model, ids, tokenizer, neighbours=3)
    E = model.embed.weight.detach().double().numpy()[ids]
    centred = E - E.mean(0)
    values, vectors = np.linalg.eigh(np.cov(centred.T))
    axes = vectors[:, ::-1][:, :2]
    expected = centred @ axes
    for axis in range(2):  # each principal axis is defined up to its sign
        got = result["coords"][:, axis]
        sign = np.sign(got @ expected[:, axis])
        np.testing.assert_allclose(got, sign * expected[:, axis], atol=1e-8)
    np.testing.assert_allclose(result["explained"], values[::-1][:2] / values.sum(), atol=1e-8)
    assert result["labels"][:3] == ["a", "b", "c"]
    for row, i in enumerate(ids):
        sims = []
        for j in ids:
            if j != i:
                a, b = E[ids.index(i)], E[ids.index(j)]
                sims.append((a @ b / np.linalg.norm(a) / np.linalg.norm(b), j))
        best = sorted(sims, key=lambda s: -s[0])[:3]
        assert list(result["neighbours"][row]) == [j for _, j in best]
        np.testing.assert_allclose(result["neighbour_cosines"][row], [c for c, _ in best],
                                   atol=1e-10)


def hooked_layers(model, inputs) -> list[np.ndarray]:
    """The stream after each layer copy, from forward hooks on the group's copies."""
    seen = []
    handles = [layer.register_forward_hook(lambda m, a, out: seen.append(out[0].detach()))
               for layer in model.layers]
    with torch.no_grad():
        model(*inputs.args)
    for h in handles:
        h.remove()
    return [s.double().numpy() for s in seen]


def cos(a, b):
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_same_token_identical_at_the_embedding_then_diverging(tokenizer):
    model = model_of("tiny-llama", tokenizer)  # RoPE: no position vector is added
    a = probe_inputs(model, tokenizer, "the cat sat")
    b = probe_inputs(model, tokenizer, "a fat cat ran off")
    pa, pb = 4, 6  # the "c" of "cat" in each
    assert a.ids["tokens"][pa] == b.ids["tokens"][pb] == ord("c")
    result = token_through_layers(model, a, pa, b, pb)
    assert result["layers"] == ["token embedding", "embed", "layers.0", "layers.1"]
    assert result["cosine"][0] == pytest.approx(1.0, abs=1e-12)
    assert result["cosine"][1] == pytest.approx(1.0, abs=1e-12)
    la, lb = hooked_layers(model, a), hooked_layers(model, b)
    for i in range(2):
        assert result["cosine"][2 + i] == pytest.approx(cos(la[i][pa], lb[i][pb]), abs=1e-6)
    assert result["cosine"][-1] < 0.999  # the contexts differ, so the vectors do
    assert result["same_token"]


def test_absolute_positions_separate_the_token_at_once(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    a = probe_inputs(model, tokenizer, "cab")
    b = probe_inputs(model, tokenizer, "abc")
    result = token_through_layers(model, a, 0, b, 2)
    assert result["cosine"][0] == pytest.approx(1.0, abs=1e-12)  # the token embedding
    E, P = model.embed.weight.detach().double(), model.pos.table.weight.detach().double()
    c = ord("c")
    assert result["cosine"][1] == pytest.approx(cos((E[c] + P[0]).numpy(),
                                                    (E[c] + P[2]).numpy()), abs=1e-6)
    with pytest.raises(ValueError, match="outside"):
        token_through_layers(model, a, 5, b, 0)


def test_position_angles_are_the_cosines_of_embedding_and_position_rows(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    ids = tokenizer.encode("abcxyz")
    result = position_angles(model, ids, length=16)
    E = model.embed.weight.detach().double().numpy()[ids]
    P = model.pos.table.weight.detach().double().numpy()[:16]
    expected = np.array([[cos(e, p) for p in P] for e in E])
    np.testing.assert_allclose(result["cosine"], expected, atol=1e-6)
    assert result["scheme"] == "learned"
    angles = np.degrees(np.arccos(expected))
    assert result["mean_angle_degrees"] == pytest.approx(angles.mean(), abs=1e-4)
    # random 64-wide vectors are nearly orthogonal, as the seed says trained ones stay
    assert 80 < result["mean_angle_degrees"] < 100
    assert position_angles(model_of("tiny-llama", tokenizer), ids) is None


def test_replay_is_one_aligned_map_per_kept_checkpoint(tmp_path, tokenizer):
    cfg = TrainConfig(corpus="task:copy", tokenizer="byte", steps=6, batch_size=4,
                      checkpoint_every=3, keep_checkpoints=2, eval_every=100, log_every=3,
                      warmup_steps=1)
    end = Trainer(tfstudio.load_graph("tiny-gpt"), cfg, run_dir=tmp_path / "run").run()
    assert end.kind == "Finished"
    folder = RunFolder(tmp_path / "run")
    model = folder.load_model()
    ids = tokenizer.encode("abcdefgh")
    maps = embedding_replay(model, folder.path, ids, tokenizer)
    assert [m["step"] for m in maps] == [3, 6]
    for entry in maps:
        twin = compile_graph(folder.graph())
        load_checkpoint(folder.checkpoints / f"step-{entry['step']:08d}", twin)
        own = embedding_map(twin, ids, tokenizer)
        # aligned by a rotation/reflection: every pairwise distance is the checkpoint's own
        d_got = np.linalg.norm(entry["coords"][:, None] - entry["coords"][None], axis=-1)
        d_own = np.linalg.norm(own["coords"][:, None] - own["coords"][None], axis=-1)
        np.testing.assert_allclose(d_got, d_own, atol=1e-8)
        np.testing.assert_array_equal(entry["neighbours"], own["neighbours"])
    np.testing.assert_allclose(maps[-1]["coords"], embedding_map(model, ids)["coords"],
                               atol=1e-8)
    # the model keeps its own (latest) weights
    twin = folder.load_model()
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(),
                                                 twin.state_dict().values()))
