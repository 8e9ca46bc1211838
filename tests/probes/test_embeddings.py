"""Embedding read-outs against direct computations: PCA from the covariance's eigenvectors,
neighbours by a brute-force cosine loop, per-layer cosines from forward hooks placed here, the
replay against each checkpoint loaded by hand."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from probe_models import block_of, model_of as perturbed_model_of, trained

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


# ---------------------------------------------------------------- the edges of each case
torch.set_num_threads(1)


def test_an_embedding_map_of_few_tokens_and_its_refusals(gpt, tokenizer):
    from tfstudio.probes import embedding_map
    model, _ = gpt
    two = embedding_map(model, [97, 98, 97])          # two distinct tokens are enough
    assert sorted(two) == ["coords", "explained", "ids", "labels", "neighbour_cosines",
                           "neighbours"]
    assert two["ids"].tolist() == [97, 98] and two["labels"] == ["97", "98"]
    assert two["neighbours"].tolist() == [[98], [97]] and two["coords"].shape == (2, 2)
    three = embedding_map(model, [97, 98, 99], neighbours=5)   # k: every other token
    assert three["neighbours"].shape == (3, 2) and three["neighbour_cosines"].shape == (3, 2)
    assert all(i not in row for i, row in zip([97, 98, 99], three["neighbours"].tolist()))
    for ids in ([97], [97, 97]):
        with pytest.raises(ValueError) as caught:
            embedding_map(model, ids)
        assert str(caught.value) == "an embedding map needs at least 2 distinct tokens"


def test_neighbours_that_tie_come_in_id_order(tokenizer):
    from tfstudio.probes import embedding_map
    model = perturbed_model_of("tiny-gpt", tokenizer)
    with torch.no_grad():
        block_of(model, "embed").weight.fill_(1.0)     # every row the same: all cosines tie
    ids = list(range(40))
    result = embedding_map(model, ids, neighbours=5)
    for i, row in zip(ids, result["neighbours"].tolist()):
        assert row == [j for j in ids if j != i][:5]


def test_the_table_of_a_scaled_embedding_and_a_model_without_one(tokenizer):
    from tfstudio.probes.embeddings import embedding_table
    t5 = perturbed_model_of("tiny-t5", tokenizer)            # its embeddings are scaled by sqrt(d)
    weight = block_of(t5, "tgt_embed").weight.detach().double().numpy()
    np.testing.assert_allclose(embedding_table(t5), weight * np.sqrt(64), rtol=1e-12)
    model = perturbed_model_of("tiny-gpt", tokenizer)
    model.embed = torch.nn.Embedding(256, 64)      # a plain embedding, not a tfstudio block
    with pytest.raises(ValueError) as caught:
        embedding_table(model)
    assert str(caught.value) == "the model has no token embedding"


def test_cosines_of_a_zero_row_are_zero():
    from tfstudio.probes.embeddings import cosine_matrix
    a = np.array([[3.0, 4.0], [0.0, 0.0]])
    b = np.array([[0.0, 2.0], [0.0, 0.0], [1.0, 0.0]])
    np.testing.assert_allclose(cosine_matrix(a, b), [[0.8, 0.0, 0.6], [0.0, 0.0, 0.0]])


def test_pca_of_a_one_wide_embedding_pads_the_second_axis():
    from tfstudio.probes.embeddings import pca_2d
    coords, ratio = pca_2d(np.array([[1.0], [2.0], [6.0]]))     # mean 3
    assert coords.shape == (3, 2) and ratio.shape == (2,)
    np.testing.assert_allclose(np.abs(coords[:, 0]), [2.0, 1.0, 3.0])
    np.testing.assert_array_equal(coords[:, 1], 0.0)
    np.testing.assert_allclose(ratio, [1.0, 0.0])
    wide, wide_ratio = pca_2d(np.random.default_rng(0).normal(size=(6, 5)))
    assert wide.shape == (6, 2) and wide_ratio.shape == (2,)


def test_position_angles_by_default_and_for_sinusoids(tokenizer):
    from tfstudio.probes import position_angles
    model = perturbed_model_of("tiny-gpt", tokenizer)
    angles = position_angles(model, [97, 98])
    assert angles["cosine"].shape == (2, 64) and angles["scheme"] == "learned"
    assert angles["mean_abs_cosine"] == pytest.approx(float(np.abs(angles["cosine"]).mean()))
    t5 = perturbed_model_of("tiny-t5", tokenizer)
    assert position_angles(t5, [97, 98], length=8)["scheme"] == "sinusoidal"
    # token rows along and against position 0: 0 and 180 degrees, never NaN, though rounding
    # puts these two cosines at 1 + 2^-52 and -1 - 2^-52 (a vector found by search)
    v = torch.tensor(np.random.default_rng(1).normal(size=64), dtype=torch.float32)
    with torch.no_grad():
        block_of(model, "pos").table.weight[0] = v
        block_of(model, "embed").weight[97] = v
        block_of(model, "embed").weight[98] = -v
    extreme = position_angles(model, [97, 98], length=1)
    assert abs(extreme["cosine"]).max() > 1                  # the rounding the clip is for
    assert extreme["mean_angle_degrees"] == pytest.approx(90.0)


def test_the_same_token_through_the_layers_with_its_norms(gpt, tokenizer):
    from tfstudio.probes import token_through_layers
    from tfstudio.probes.embeddings import stream_vectors
    model, _ = gpt
    a = probe_inputs(model, tokenizer, "xab")
    b = probe_inputs(model, tokenizer, "cdab")
    result = token_through_layers(model, a, -3, b, 3)        # positions at both ends
    assert sorted(result) == ["cosine", "layers", "norm_a", "norm_b", "same_token"]
    _, va = stream_vectors(model, a, -3)
    _, vb = stream_vectors(model, b, 3)
    np.testing.assert_allclose(result["norm_a"], np.sqrt((va ** 2).sum(1)), rtol=1e-12)
    np.testing.assert_allclose(result["norm_b"], np.sqrt((vb ** 2).sum(1)), rtol=1e-12)
    assert result["same_token"] is False                     # "x" and "b"
    for p in (3, -4):
        with pytest.raises(ValueError) as caught:
            token_through_layers(model, a, p, b, 0)
        assert str(caught.value) == f"position {p} is outside a text of 3 tokens"


def test_the_replay_aligns_every_older_map_onto_the_latest(tmp_path, tokenizer):
    from tfstudio.probes import embedding_map, embedding_replay
    from tfstudio.runs import RunFolder, load_checkpoint
    trained("tiny-gpt", tmp_path, corpus="task:copy", steps=9, checkpoint_every=3,
            keep_checkpoints=3)
    folder = RunFolder(tmp_path / "run")
    (folder.checkpoints / "step-notes").mkdir()               # not a checkpoint: skipped
    (folder.checkpoints / "step-00000012").write_text("a file, not a folder")
    model = folder.load_model()
    ids = tokenizer.encode("abcdefgh")
    maps = embedding_replay(model, folder.path, ids, tokenizer, neighbours=2)
    assert [m["step"] for m in maps] == [3, 6, 9]
    latest = maps[-1]["coords"]
    for entry in maps:
        twin = folder.load_model()
        load_checkpoint(folder.checkpoints / f"step-{entry['step']:08d}", twin)
        own = embedding_map(twin, ids, tokenizer, neighbours=2)
        assert entry["labels"] == tokenizer.token_strings(ids)
        assert entry["neighbours"].shape == (len(ids), 2)
        # orthogonal Procrustes by its closed form (Schonemann 1966): the rotation R minimising
        # |A R - B| is U V^T from the SVD of A^T B; then the latest's mean is added back
        centred = own["coords"] - own["coords"].mean(0)
        u, _, vt = np.linalg.svd(centred.T @ (latest - latest.mean(0)))
        rotation = u @ vt
        np.testing.assert_allclose(entry["coords"], centred @ rotation + latest.mean(0),
                                   atol=1e-8)
