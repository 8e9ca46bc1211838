"""Embeddings, static and contextual (plain numpy out).

- :func:`embedding_map`: the token embedding table projected to 2D by PCA (numpy SVD of the
  centred rows), with each token's nearest neighbours by cosine similarity;
- :func:`embedding_replay`: the same map for every checkpoint a run kept, each projection
  rotated onto the latest one (orthogonal Procrustes) so the points move only as the
  embeddings do, not as the PCA axes flip;
- :func:`token_through_layers`: one token in two texts followed through the residual stream
  (the token embedding, then where :mod:`.lens` reads it), with the cosine between its two
  vectors per layer: 1 at the token embedding, falling as attention mixes in each context;
- :func:`position_angles`: how aligned token embeddings are with the positional vectors a
  position table adds (the seed expects nearly orthogonal), read against chance: mean |cos|
  beside that of random vectors of the same dimension and count, and the share of the
  positions' energy inside the top-k token-embedding directions beside k/d. (The mean angle
  is about 90 degrees for any symmetric spread of cosines, so it says nothing alone.)
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..graph.kinds import ABSOLUTE_SCHEMES
from ._util import looking_at


def _stream_embedding(model):
    """The token embedding of the decoded stream (the target's in an encoder-decoder: the
    last one the model lists)."""
    from ..nn import TokenEmbedding

    found = [m for _, m in model.blocks() if isinstance(m, TokenEmbedding)]
    if not found:
        raise ValueError("the model has no token embedding")
    return found[-1]


def embedding_table(model) -> np.ndarray:
    """[vocab, d] float64: the rows the stream's token embedding looks up (times sqrt(d)
    when the embedding scales them)."""
    m = _stream_embedding(model)
    table = m.weight.detach().double().cpu().numpy()
    return table * np.sqrt(m.embedding_dim) if m.scale else table


def pca_2d(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(coords [n, 2], explained variance ratio [2]) of the rows' first two principal axes."""
    centred = rows - rows.mean(axis=0, keepdims=True)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    coords = centred @ vt[:2].T
    total = float((s ** 2).sum()) or 1.0
    ratio = (s[:2] ** 2) / total
    if coords.shape[1] < 2:  # a 1-wide embedding: pad the second axis
        coords = np.pad(coords, ((0, 0), (0, 2 - coords.shape[1])))
        ratio = np.pad(ratio, (0, 2 - ratio.shape[0]))
    return coords, ratio


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    na = np.linalg.norm(a, axis=-1, keepdims=True)
    nb = np.linalg.norm(b, axis=-1, keepdims=True)
    return (a / np.where(na == 0, 1, na)) @ (b / np.where(nb == 0, 1, nb)).T


def embedding_map(model, ids: list[int], tokenizer=None, neighbours: int = 5) -> dict:
    """{"ids", "labels", "coords" [n, 2], "explained" [2], "neighbours" [n, k] (ids among
    ``ids``, nearest first, never the token itself), "neighbour_cosines" [n, k]}."""
    ids = [int(i) for i in dict.fromkeys(ids)]
    if len(ids) < 2:
        raise ValueError("an embedding map needs at least 2 distinct tokens")
    rows = embedding_table(model)[ids]
    coords, explained = pca_2d(rows)
    cos = cosine_matrix(rows, rows)
    np.fill_diagonal(cos, -np.inf)
    k = min(neighbours, len(ids) - 1)
    order = np.argsort(-cos, axis=1, kind="stable")[:, :k]
    labels = tokenizer.token_strings(ids) if tokenizer is not None else [str(i) for i in ids]
    return {"ids": np.asarray(ids, dtype=np.int64), "labels": labels, "coords": coords,
            "explained": explained, "neighbours": np.asarray(ids, dtype=np.int64)[order],
            "neighbour_cosines": np.take_along_axis(cos, order, axis=1)}


def procrustes(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The orthogonal 2x2 matrix R (rotation or reflection) minimising |source R - target|."""
    u, _, vt = np.linalg.svd(source.T @ target)
    return u @ vt


def embedding_replay(model, run_dir: str | Path, ids: list[int], tokenizer=None,
                     neighbours: int = 5) -> list[dict]:
    """:func:`embedding_map` for every checkpoint kept in ``run_dir`` (oldest first, each with
    its "step"), projections aligned to the latest one's. ``model`` is a model of the run's
    graph; its weights are put back afterwards."""
    from ..runs.checkpoint import load_checkpoint

    directory = Path(run_dir) / "checkpoints"
    kept = sorted(p for p in directory.glob("step-*") if p.is_dir()
                  and p.name[len("step-"):].isdigit()) if directory.is_dir() else []
    saved = {k: v.clone() for k, v in model.state_dict().items()}
    maps = []
    try:
        for path in kept:
            load_checkpoint(path, model)
            entry = embedding_map(model, ids, tokenizer, neighbours)
            entry["step"] = int(path.name[len("step-"):])
            maps.append(entry)
    finally:
        model.load_state_dict(saved)
    if maps:
        latest = maps[-1]["coords"]
        for entry in maps[:-1]:
            centred = entry["coords"] - entry["coords"].mean(0)
            entry["coords"] = centred @ procrustes(centred, latest - latest.mean(0)) \
                + latest.mean(0)
    return maps


def stream_vectors(model, inputs, position: int) -> tuple[list[str], np.ndarray]:
    """(labels, [rows, d]) of the token at ``position``: its token embedding, then the
    residual stream where the logit lens reads it (entering the layers, after each layer)."""
    from ..nn import attached
    from .lens import residual_stream

    embedding = _stream_embedding(model)
    name = next(n for n, m in model.named_modules() if m is embedding)
    seen = []   # what its "out" hook point saw: the vectors looked up (and scaled)
    with looking_at(model), attached(model, lambda _n, _p, x: seen.append(x),
                                     names={f"{name}.hook_out" if name else "hook_out"}):
        model(*inputs.args)
    looked_up = seen[-1]
    rows, _ = residual_stream(model, inputs)
    labels = ["token embedding"] + [label for label, _ in rows]
    vectors = [looked_up[0, position]] + [stream[0, position] for _, stream in rows]
    return labels, np.stack([v.detach().double().cpu().numpy() for v in vectors])


def token_through_layers(model, inputs_a, position_a: int, inputs_b, position_b: int
                         ) -> dict:
    """The same token at ``position_a`` of one text and ``position_b`` of another, followed
    through the layers: {"layers", "cosine" [rows], "norm_a", "norm_b"}."""
    ids_a = inputs_a.ids[inputs_a.stream_role]
    ids_b = inputs_b.ids[inputs_b.stream_role]
    for ids, p in ((ids_a, position_a), (ids_b, position_b)):
        if not -len(ids) <= p < len(ids):
            raise ValueError(f"position {p} is outside a text of {len(ids)} tokens")
    labels, a = stream_vectors(model, inputs_a, position_a)
    _, b = stream_vectors(model, inputs_b, position_b)
    cos = (a * b).sum(-1) / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1),
                                       1e-30)
    return {"layers": labels, "cosine": cos, "norm_a": np.linalg.norm(a, axis=-1),
            "norm_b": np.linalg.norm(b, axis=-1),
            "same_token": bool(ids_a[position_a] == ids_b[position_b])}


def position_angles(model, ids: list[int], length: int = 64) -> dict | None:
    """{"cosine" [tokens, positions], "mean_abs_cosine", "mean_angle_degrees", "scheme"}
    between the token embeddings of ``ids`` and the first ``length`` positional vectors of
    the stream's position table; None when the model adds none (RoPE, ALiBi, recurrent)."""
    from .positions import position_data

    tables = {s: d for s, d in position_data(model, length).items()
              if s in ABSOLUTE_SCHEMES}
    if not tables:
        return None
    scheme, data = next(iter(tables.items()))
    rows = embedding_table(model)[[int(i) for i in dict.fromkeys(ids)]]
    positions = data["table"].astype(np.float64)
    cos = cosine_matrix(rows, positions)
    angles = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))
    random = random_abs_cosines(rows.shape[1], len(rows), len(positions))
    return {"scheme": scheme, "cosine": cos, "mean_abs_cosine": float(np.abs(cos).mean()),
            "mean_angle_degrees": float(angles.mean()),
            "random_mean_abs_cosine": float(random.mean()),
            "random_spread": float(random.std(ddof=1)),
            "subspace": subspace_shares(rows, positions)}


def random_abs_cosines(d: int, tokens: int, positions: int, draws: int = 16,
                       seed: int = 0) -> np.ndarray:
    """Mean |cos| between ``tokens`` and ``positions`` Gaussian random vectors in ``d``
    dimensions, once per draw (about sqrt(2 / (pi d)) for large d: 0.100 at d = 64)."""
    rng = np.random.default_rng(seed)
    return np.array([np.abs(cosine_matrix(rng.standard_normal((tokens, d)),
                                           rng.standard_normal((positions, d)))).mean()
                     for _ in range(draws)])


def subspace_shares(tokens: np.ndarray, positions: np.ndarray,
                    ks: tuple[int, ...] = (1, 2, 4, 8, 16)) -> list[dict]:
    """[{"k", "share", "chance"}]: the share of the position vectors' energy (sum of squares)
    inside the span of the top-k right singular vectors of the token embeddings, against
    k / d, the share any k directions hold of vectors spread evenly over d dimensions."""
    d = tokens.shape[1]
    _, _, vt = np.linalg.svd(tokens, full_matrices=False)
    energy = float((positions ** 2).sum()) or 1.0
    return [{"k": k, "share": float(((positions @ vt[:k].T) ** 2).sum()) / energy,
             "chance": k / d} for k in ks if k < min(d, len(vt))]


def alignment_words(angles: dict) -> str:
    """The reading of ``position_angles``' numbers, in words computed from them: how mean |cos|
    compares with random vectors (beyond two of the random draws' standard deviations), and
    the top-k subspace share against chance."""
    mean, rand, spread = (angles["mean_abs_cosine"], angles["random_mean_abs_cosine"],
                          angles["random_spread"])
    ratio = mean / rand if rand else float("nan")
    if abs(mean - rand) <= 2 * spread:
        verdict = "as near orthogonal as random vectors of this size"
    elif mean > rand:
        verdict = f"{ratio:.1f} times as aligned as random vectors: not orthogonal"
    else:
        verdict = f"closer to orthogonal than random vectors ({ratio:.2f} times their |cos|)"
    text = (f"mean |cos| {mean:.3f} against {rand:.3f} ± {spread:.3f} for random vectors of the "
            f"same dimension and count: {verdict}")
    if angles["subspace"]:
        text += "; share of position energy in the top-k token directions: " + ", ".join(
            f"k={s['k']} {100 * s['share']:.1f}% (chance {100 * s['chance']:.1f}%)"
            for s in angles["subspace"])
    return text
