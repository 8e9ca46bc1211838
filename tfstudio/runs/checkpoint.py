"""Checkpoints that survive a kill at any moment.

Layout of a run folder's ``checkpoints/``::

    step-00000200/model.safetensors      weights (tied weights stored once)
    step-00000200/optimizer.safetensors  optimizer tensors (AdamW moments, steps)
    step-00000200/state.json             everything else: step, optimizer hyper-parameters, RNG,
                                         data position, grad-scaler state
    LATEST                               name of the newest complete checkpoint

A checkpoint is written under a temporary name, flushed, renamed into place, and only then does
LATEST move to it (an atomic ``os.replace``). A process killed mid-write leaves LATEST naming the
previous checkpoint, which is still whole.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, load_model, save_file, save_model

LATEST = "LATEST"


class CheckpointError(RuntimeError):
    pass


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _optimizer_split(state: dict) -> tuple[dict[str, torch.Tensor], dict]:
    tensors, meta = {}, {}
    for idx, slots in state["state"].items():
        meta[str(idx)] = {}
        for name, value in slots.items():
            if torch.is_tensor(value):
                tensors[f"{idx}.{name}"] = value.detach().cpu().contiguous()
            else:
                meta[str(idx)][name] = value
    return tensors, {"param_groups": state["param_groups"], "scalars": meta}


def _optimizer_join(tensors: dict[str, torch.Tensor], meta: dict) -> dict:
    state: dict[int, dict[str, Any]] = {}
    for key, value in tensors.items():
        idx, name = key.split(".", 1)
        state.setdefault(int(idx), {})[name] = value
    for idx, scalars in meta["scalars"].items():
        state.setdefault(int(idx), {}).update(scalars)
    return {"state": state, "param_groups": meta["param_groups"]}


def rng_state() -> dict[str, Any]:
    state = {"torch": torch.get_rng_state().tolist()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = [s.tolist() for s in torch.cuda.get_rng_state_all()]
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(torch.tensor(state["torch"], dtype=torch.uint8))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([torch.tensor(s, dtype=torch.uint8) for s in state["cuda"]])


def save_checkpoint(directory: Path, step: int, model: torch.nn.Module,
                    optimizer: torch.optim.Optimizer | None, state: dict[str, Any],
                    keep_last: int = 2, weights: dict[str, torch.Tensor] | None = None) -> Path:
    """Write checkpoint ``step`` atomically and prune older ones (``keep_last`` are kept).

    ``weights`` replaces ``model``'s own state dict when given (whole weights gathered from
    sharded ranks)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = f"step-{step:08d}"
    copy = 0
    while (directory / name).exists():  # never replace the folder LATEST may point to
        copy += 1
        name = f"step-{step:08d}.{copy}"
    final = directory / name
    partial = directory / f".{name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    if weights is None:
        save_model(model, str(partial / "model.safetensors"))
    else:
        save_file(_drop_aliases(weights, model), str(partial / "model.safetensors"))
    full_state = {"step": step, **state}
    if optimizer is not None:
        tensors, meta = _optimizer_split(optimizer.state_dict())
        save_file(tensors, str(partial / "optimizer.safetensors"))
        full_state["optimizer"] = meta
    with open(partial / "state.json", "w", encoding="utf-8") as f:
        json.dump(full_state, f)
        f.flush()
        os.fsync(f.fileno())
    for file in partial.iterdir():
        with open(file, "rb") as f:
            os.fsync(f.fileno())
    os.replace(partial, final)
    _fsync_dir(directory)
    pointer = directory / f"{LATEST}.tmp"
    pointer.write_text(name, encoding="utf-8")
    os.replace(pointer, directory / LATEST)
    _fsync_dir(directory)
    _prune(directory, keep_last, keep=name)
    return final


def _drop_aliases(weights: dict[str, torch.Tensor], model: torch.nn.Module
                  ) -> dict[str, torch.Tensor]:
    """Keep a tied parameter under its first name only, as ``save_model`` does (gathered
    weights arrive as separate copies, so the tie is read off the model)."""
    first: dict[int, str] = {}
    aliases = set()
    for name, param in model.named_parameters(remove_duplicate=False):
        if id(param) in first:
            aliases.add(name)
        else:
            first[id(param)] = name
    return {k: v.contiguous() for k, v in weights.items() if k not in aliases}


def _prune(directory: Path, keep_last: int, keep: str) -> None:
    done = sorted(p for p in directory.glob("step-*") if p.is_dir())
    for old in done[:-keep_last] if keep_last > 0 else []:
        if old.name != keep:
            shutil.rmtree(old, ignore_errors=True)
    for partial in directory.glob(".step-*.partial"):
        shutil.rmtree(partial, ignore_errors=True)


def latest_checkpoint(directory: Path) -> Path | None:
    pointer = Path(directory) / LATEST
    if not pointer.exists():
        return None
    path = Path(directory) / pointer.read_text(encoding="utf-8").strip()
    return path if path.is_dir() else None


def load_checkpoint(path: Path, model: torch.nn.Module,
                    optimizer: torch.optim.Optimizer | None = None,
                    device: str | torch.device = "cpu") -> dict[str, Any]:
    """Restore weights (and the optimizer if given) from ``path``; returns the JSON state."""
    path = Path(path)
    if not (path / "model.safetensors").exists():
        raise CheckpointError(f"{path} is not a checkpoint (no model.safetensors)")
    try:
        missing, unexpected = load_model(model, str(path / "model.safetensors"), strict=False,
                                         device=str(device))
    except RuntimeError as exc:  # shapes that differ: the graph changed since training
        raise CheckpointError(f"{path}: the weights do not fit this graph ({exc})") from None
    if unexpected or [k for k in missing if not _is_tied_alias(model, k)]:
        raise CheckpointError(
            f"{path}: the weights do not fit this graph (missing {sorted(missing)[:5]}, "
            f"unexpected {sorted(unexpected)[:5]}); was the graph changed after training?")
    state = json.loads((path / "state.json").read_text(encoding="utf-8"))
    if optimizer is not None and "optimizer" in state:
        tensors = load_file(str(path / "optimizer.safetensors"), device=str(device))
        optimizer.load_state_dict(_optimizer_join(tensors, state["optimizer"]))
    return state


def _is_tied_alias(model: torch.nn.Module, key: str) -> bool:
    """save_model stores a tied tensor once; the other name is reported missing but is fine."""
    params = dict(model.named_parameters(remove_duplicate=False))
    if key not in params:
        return False
    target = params[key]
    return any(p is target and k != key for k, p in params.items())
