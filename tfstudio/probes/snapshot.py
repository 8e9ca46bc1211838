"""One look inside a model on the probe text, as a plain nested dict, and its files on disk.

A snapshot is taken with one forward pass (attention and expert routing read at their hook
points, activation hooks on) and one walk::

    {"step": 120, "text": "abcdefgh>hgfedcba", "family": "decoder",
     "tokens": {"tokens": [...strings]}, "ids": {"tokens": int array},
     "attention": {"layers.0.attn": AttentionMap.to_dict(), ...},
     "positions": {"learned": {...}},            # see shown_positions
     "experts": {"layers.0.moe": {...}},          # see routing.py
     "activation_rms": {"embed": 0.9, ...}, "grad_norm": {"embed": 0.1, ...},
     "next_token_logits": float32 array [V],      # after the probe text's last token
     "walk": {"position": T - 1, "head": 0,       # the forward pass at the last token:
              "steps": {"000": Step.summary(), ...}}}   # each step's small picture

During training the trainer takes one every ``probe_every`` steps (between steps, so the model
and its gradients are those of the step just finished), emits it as a ``Probe`` event and keeps
it as ``RUN_DIR/probes/step-00000120.npz`` so a step slider can replay it and a restarted app
can reopen it. Only every :data:`WALK_KEPT_EVERY`-th look (the first included) takes the walk:
a walk is about 37 KB of a 107 KB file and more time than the rest of the look, so a
20,000-step run looking every 10 steps would otherwise keep ~74 MB of walks
(``bench/bench_snapshot_walks.py`` measures both). Explain shows the newest walk while the run
trains and names its step. Files hold arrays as arrays and everything else as one JSON entry; they load with
``allow_pickle=False``, so opening one never runs code.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ._util import looking_at
from .attention import AttentionReader
from .inputs import DEFAULT_MAX_TOKENS, default_probe_text, probe_inputs
from .positions import position_data
from .routing import RoutingReader
from .telemetry import ActivationRecorder, gradient_norms

PROBES_DIR = "probes"
POSITIONS_SHOWN = 128  # positions drawn by the positions view (the run's sequence length at most)
TABLE_ROWS_SHOWN = 4096  # rows of a learned table kept: all of any table a model here learns
WALK_KEPT_EVERY = 5      # a look takes the walk when its number % this is 0 (see above)
_META = "__meta__.json"


def take_snapshot(model, tokenizer, text: str, *, step: int = 0,
                  max_tokens: int = DEFAULT_MAX_TOKENS, position_length: int | None = None,
                  separator: str = ">", walk: bool = True) -> dict[str, Any]:
    """Everything the views show about ``model`` on ``text`` (see the module docstring); the
    walk only when ``walk``."""
    from ..nn import attached

    inputs = probe_inputs(model, tokenizer, text, max_tokens, separator)
    reader, router = AttentionReader(model), RoutingReader(model)
    with looking_at(model), attached(model, reader, names=reader.names), \
            attached(model, router, names=router.names), ActivationRecorder(model) as recorder:
        logits = model(*inputs.args)
    attention = reader.maps()
    length = position_length or max(len(v) for v in inputs.ids.values())
    return {
        "step": int(step), "text": text, "family": model.family,
        "tokens": inputs.tokens,
        "ids": {role: np.asarray(ids, dtype=np.int64) for role, ids in inputs.ids.items()},
        "attention": {k: m.to_dict() for k, m in attention.items()},
        "positions": shown_positions(model, length),
        "experts": router.routing(),
        "activation_rms": recorder.values,
        "grad_norm": gradient_norms(model),
        "next_token_logits": logits[0, -1].float().cpu().numpy().copy(),
        **({"walk": walk_summary(model, inputs, tokenizer)} if walk else {}),
    }


def walk_summary(model, inputs, tokenizer=None) -> dict[str, Any]:
    """The walk at the text's last token as its steps' summaries (a few numbers each, so a
    look taken every few steps of training stays small): what Explain shows while a run
    trains, before its weights are in the app."""
    from .walk import forward_walk

    walk = forward_walk(model, inputs)
    steps = walk.summaries()
    for s in steps:   # the likeliest tokens named, for a view without the tokenizer
        if "top_ids" in s and tokenizer is not None:
            s["top_tokens"] = tokenizer.token_strings([int(i) for i in s["top_ids"]])
    return {"position": walk.position, "head": walk.head, "stream_role": inputs.stream_role,
            "steps": {f"{i:03d}": s for i, s in enumerate(steps)}}


def shown_positions(model, length: int) -> dict[str, dict]:
    """What the positions view draws: :func:`position_data` at ``length`` positions, a learned
    table with all its rows (up to :data:`TABLE_ROWS_SHOWN`), the rows past the trained length
    included. Its similarity stays the first ``length`` positions: ``length`` x ``length``
    instead of the square of the table, which would make every saved snapshot 10x larger."""
    data = position_data(model, length, table_rows=TABLE_ROWS_SHOWN)
    learned = data.get("learned")
    if learned is not None:
        learned["similarity"] = learned["similarity"][:length, :length].copy()
    return data


def snapshot_for_run(trainer) -> dict[str, Any]:
    """The trainer's probe hook: a snapshot on ``config.probe_text`` (a default one when empty),
    saved in the run folder when the trainer writes one. ``config.probe_text`` may be changed
    while training runs; the next probe reads it."""
    cfg = trainer.config
    text = cfg.probe_text or _default_text(trainer)
    data = take_snapshot(trainer.model, trainer.tokenizer, text, step=trainer.step,
                         max_tokens=min(cfg.seq_len, DEFAULT_MAX_TOKENS),
                         position_length=min(cfg.seq_len, POSITIONS_SHOWN),
                         separator=_separator(trainer),
                         walk=keeps_walk(trainer.step, cfg.probe_every))
    if getattr(trainer, "writes", False) and trainer.run_folder is not None:
        SnapshotStore(trainer.run_folder.path).save(data)
    return data


def keeps_walk(step: int, probe_every: int) -> bool:
    """Whether the look at ``step`` takes the walk: every :data:`WALK_KEPT_EVERY`-th look
    (the first one included)."""
    return (step // max(int(probe_every), 1)) % WALK_KEPT_EVERY == 0


def _default_text(trainer) -> str:
    cached = getattr(trainer, "_default_probe_text", None)
    if cached is None:
        corpus = getattr(getattr(trainer, "pipeline", None), "corpus", None)
        cached = trainer._default_probe_text = default_probe_text(corpus, trainer.tokenizer)
    return cached


def _separator(trainer) -> str:
    task = getattr(getattr(getattr(trainer, "pipeline", None), "corpus", None), "task", None)
    return getattr(task, "sep", ">") or ">"


class SnapshotStore:
    """The snapshots of one run: ``RUN_DIR/probes/step-NNNNNNNN.npz``."""

    def __init__(self, run_dir: str | Path):
        self.directory = Path(run_dir) / PROBES_DIR

    def path(self, step: int) -> Path:
        return self.directory / f"step-{int(step):08d}.npz"

    def save(self, data: dict[str, Any]) -> Path:
        """Write atomically (a temporary file renamed into place)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.path(data["step"])
        tmp = target.with_name(target.stem + ".partial.npz")
        arrays, meta = _flatten(data)
        arrays[_META] = np.array(json.dumps(meta))
        np.savez_compressed(tmp, **arrays)
        os.replace(tmp, target)
        return target

    def steps(self) -> list[int]:
        if not self.directory.is_dir():
            return []
        steps = []
        for path in self.directory.glob("step-*.npz"):
            number = path.stem[len("step-"):]
            if number.isdigit():
                steps.append(int(number))
        return sorted(steps)

    def load(self, step: int) -> dict[str, Any]:
        path = self.path(step)
        try:
            with np.load(path, allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
        except FileNotFoundError:
            raise FileNotFoundError(f"{path}: no snapshot of step {step} in this run") from None
        except (ValueError, OSError) as exc:
            raise ValueError(f"{path} is not a readable probe snapshot ({exc}); it may be "
                             "damaged: delete it and the view skips that step") from None
        meta = json.loads(str(arrays.pop(_META)))
        return _unflatten(arrays, meta)

    def latest(self) -> dict[str, Any] | None:
        steps = self.steps()
        return self.load(steps[-1]) if steps else None


def _flatten(data: dict, prefix: str = "") -> tuple[dict[str, np.ndarray], dict]:
    """Arrays keyed "attention/layers.0.attn/weights"; everything else into a JSON tree."""
    arrays: dict[str, np.ndarray] = {}
    meta: dict[str, Any] = {}
    for key, value in data.items():
        if "/" in str(key):
            raise ValueError(f"snapshot key {key!r} may not contain '/'")
        path = f"{prefix}{key}"
        if isinstance(value, np.ndarray):
            arrays[path] = value
        elif isinstance(value, dict):
            sub_arrays, sub_meta = _flatten(value, path + "/")
            arrays.update(sub_arrays)
            meta[key] = sub_meta
        elif isinstance(value, (np.floating, np.integer, np.bool_)):
            meta[key] = value.item()
        else:
            meta[key] = value
    return arrays, meta


def _unflatten(arrays: dict[str, np.ndarray], meta: dict) -> dict[str, Any]:
    data = json.loads(json.dumps(meta))
    for path, array in arrays.items():
        node = data
        *parents, leaf = path.split("/")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = array
    return data
