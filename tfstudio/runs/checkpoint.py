"""Checkpoints that survive a kill at any moment.

Layout of a run folder's ``checkpoints/``::

    step-00000200/model.safetensors      weights (tied weights stored once)
    step-00000200/optimizer.safetensors  optimizer tensors (AdamW moments, steps)
    step-00000200/state.json             everything else: step, optimizer hyper-parameters, RNG,
                                         data position, grad-scaler state
    step-00000200/manifest.json          each file's size and sha256, so the checkpoint can be
                                         verified before it is trusted
    LATEST                               name of the newest complete checkpoint

A checkpoint is written under a temporary name (``.step-00000200.<pid>.partial``, so clean-up
knows whose it is), flushed, renamed into place, and only then does LATEST move to it (an
atomic ``os.replace``). A process killed mid-write leaves LATEST naming the previous checkpoint,
which is still whole.

Reading: :func:`find_checkpoint` returns the newest checkpoint that verifies (LATEST's, else
the newest intact one) and one line for each newer one it skipped, saying why.
"""
from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

# torch and safetensors are imported by the functions that write or read tensors, so finding
# and verifying checkpoints (RunFolder) loads without torch (`tfstudio lesson` lists the course)

LATEST = "LATEST"
MANIFEST = "manifest.json"
_NAME = re.compile(r"step-(\d{8,})(?:\.(\d+))?")
_PARTIAL = re.compile(r"\.(step-\d{8,}(?:\.\d+)?)\.(\d+)\.partial")


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
    import torch

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
    import torch

    state = {"torch": torch.get_rng_state().tolist()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = [s.tolist() for s in torch.cuda.get_rng_state_all()]
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    import torch

    torch.set_rng_state(torch.tensor(state["torch"], dtype=torch.uint8))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([torch.tensor(s, dtype=torch.uint8) for s in state["cuda"]])


def save_checkpoint(directory: Path, step: int, model: torch.nn.Module,
                    optimizer: torch.optim.Optimizer | None, state: dict[str, Any],
                    keep_last: int = 2, weights: dict[str, torch.Tensor] | None = None,
                    setup: dict[str, Path] | None = None) -> Path:
    """Write checkpoint ``step`` atomically and prune older ones (``keep_last`` are kept; 0
    keeps them all).

    ``setup`` names the run's files the weights mean nothing without (graph.json,
    tokenizer.json): their sha256 goes into the manifest, for :func:`setup_problem`.

    ``weights`` replaces ``model``'s own state dict when given (whole weights gathered from
    sharded ranks)."""
    if keep_last < 0:
        raise ValueError(f"keep_last must be 0 (keep every checkpoint) or more; got {keep_last}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = f"step-{step:08d}"
    copy = 0
    while (directory / name).exists():  # never replace the folder LATEST may point to
        copy += 1
        name = f"step-{step:08d}.{copy}"
    final = directory / name
    partial = directory / f".{name}.{os.getpid()}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    try:
        _write_partial(partial, step, model, optimizer, state, weights, setup or {})
        os.replace(partial, final)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)  # a full disk gets its space back
        raise
    _fsync_dir(directory)
    pointer = directory / f"{LATEST}.tmp"
    try:
        pointer.write_text(name, encoding="utf-8")
        os.replace(pointer, directory / LATEST)
    except BaseException:
        pointer.unlink(missing_ok=True)  # LATEST still names the previous checkpoint
        shutil.rmtree(final, ignore_errors=True)
        raise
    _fsync_dir(directory)
    _prune(directory, keep_last, keep=name)
    return final


def _write_partial(partial: Path, step: int, model: torch.nn.Module,
                   optimizer: torch.optim.Optimizer | None, state: dict[str, Any],
                   weights: dict[str, torch.Tensor] | None, setup: dict[str, Path]) -> None:
    """Every file of a checkpoint, flushed to disk, into the temporary folder ``partial``."""
    from safetensors.torch import save_file, save_model

    if weights is None:
        save_model(model, str(partial / "model.safetensors"))
    else:
        save_file(_drop_aliases(weights, model), str(partial / "model.safetensors"))
    full_state = {"step": step, **state, "manifest": True}   # so a lost manifest is damage
    if optimizer is not None:
        tensors, meta = _optimizer_split(optimizer.state_dict())
        save_file(tensors, str(partial / "optimizer.safetensors"))
        full_state["optimizer"] = meta
    with open(partial / "state.json", "w", encoding="utf-8") as f:
        json.dump(full_state, f)
        f.flush()
        os.fsync(f.fileno())
    _write_manifest(partial, setup)
    for file in partial.iterdir():
        with open(file, "rb") as f:
            os.fsync(f.fileno())


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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_manifest(folder: Path, setup: dict[str, Path]) -> None:
    files = {p.name: {"bytes": p.stat().st_size, "sha256": _sha256(p)}
             for p in sorted(folder.iterdir()) if p.is_file()}
    record = {"files": files}
    if setup:
        record["setup"] = {name: _sha256(path) for name, path in sorted(setup.items())}
    with open(folder / MANIFEST, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
        f.flush()
        os.fsync(f.fileno())


def _prune(directory: Path, keep_last: int, keep: str) -> None:
    done = sorted((p for p in directory.iterdir() if p.is_dir() and _NAME.fullmatch(p.name)),
                  key=lambda p: name_order(p.name))
    if _readers(directory):  # a reader holds them: they are pruned at a later save
        done = []
    for old in done[:-keep_last] if keep_last > 0 else []:
        if old.name != keep:
            shutil.rmtree(old, ignore_errors=True)
    for partial in directory.glob(".step-*.partial"):
        if _abandoned(partial):
            shutil.rmtree(partial, ignore_errors=True)


_READER = re.compile(r"\.reader\.(\d+)\.\d+")
_reader_count = itertools.count()


@contextlib.contextmanager
def held_from_rotation(directory: Path):
    """While the block runs, a training run saving into ``directory`` deletes none of its
    checkpoints (a reader is loading one). A mark file names the reading process, so a reader
    that was killed holds nothing; a folder the reader may not write is read without one."""
    mark = Path(directory) / f".reader.{os.getpid()}.{next(_reader_count)}"
    try:
        mark.touch()
    except OSError:
        mark = None
    try:
        yield
    finally:
        if mark is not None:
            mark.unlink(missing_ok=True)


def _readers(directory: Path) -> bool:
    """Whether a live process holds ``directory``'s checkpoints from rotation."""
    for mark in directory.glob(".reader.*"):
        match = _READER.fullmatch(mark.name)
        if match and _alive(int(match.group(1))):
            return True
    return False


def remove_abandoned_partials(directory: Path) -> None:
    """Delete the half-written checkpoints of writers that no longer run (a kill, a full disk);
    called when a run starts, under the run folder's lock."""
    directory = Path(directory)
    if directory.is_dir():
        for partial in directory.glob(".step-*.partial"):
            if _abandoned(partial):
                shutil.rmtree(partial, ignore_errors=True)


def _abandoned(partial: Path) -> bool:
    """A temporary checkpoint folder of this process, or of a writer that no longer runs
    (another live writer's half-written checkpoint is never touched)."""
    match = _PARTIAL.fullmatch(partial.name)
    if match is None:
        return True  # written before partial folders carried their writer's PID
    pid = int(match.group(2))
    return pid == os.getpid() or not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        # signal 0 only asks whether the process exists. Not mutated: a mutant's signal 1
        # (SIGHUP) would really be sent, in the tests to the live writer they stand in with
        # their parent process, which is mutmut itself (it died with exit -1 mid-run)
        os.kill(pid, 0)  # pragma: no mutate
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


# ----------------------------------------------------------------------- reading and verifying
def name_order(name: str) -> tuple[int, int]:
    """(step, copy) of a checkpoint folder name such as ``step-00000200`` or ``step-00000200.1``."""
    match = _NAME.fullmatch(name)
    if match is None:
        raise ValueError(f"{name!r} is not a checkpoint folder name")
    return int(match.group(1)), int(match.group(2) or 0)


def step_of(path: Path) -> int:
    """The training step a checkpoint folder holds, from its name."""
    return name_order(Path(path).name)[0]


@dataclass
class CheckpointChoice:
    """The newest checkpoint that verifies (None: none does) and, for each newer one passed
    over, one line naming the file and what is wrong with it."""
    path: Path | None
    skipped: list[str] = field(default_factory=list)


def find_checkpoint(directory: Path) -> CheckpointChoice:
    """LATEST's checkpoint if it verifies, else the newest intact one in ``directory``."""
    directory = Path(directory)
    skipped: list[str] = []
    named, problem = _read_latest(directory)
    if named is not None:
        found = checkpoint_problem(named)
        if found is None:
            return CheckpointChoice(named, skipped)
        problem = _damage(named, found)
    if problem is not None:
        skipped.append(problem)
    for candidate in _checkpoint_folders(directory):
        if named is not None and candidate.name == named.name:
            continue
        found = checkpoint_problem(candidate)
        if found is None:
            return CheckpointChoice(candidate, skipped)
        if (line := _damage(candidate, found)) is not None:
            skipped.append(line)
    return CheckpointChoice(None, skipped)


def _damage(folder: Path, found: tuple[str, str]) -> str | None:
    """The line naming what ``checkpoint_problem`` found wrong with ``folder``; None where the
    folder is gone: rotated away by a run still training while it was read, not damaged."""
    if not folder.exists():
        return None
    return f"{folder / found[0]} {found[1]}" if found[0] else f"{folder} {found[1]}"


def latest_checkpoint(directory: Path) -> Path | None:
    """The newest checkpoint in ``directory`` that verifies (see :func:`find_checkpoint`)."""
    return find_checkpoint(directory).path


def _checkpoint_folders(directory: Path) -> list[Path]:
    """Checkpoint folders, newest first."""
    if not directory.is_dir():
        return []
    found = [p for p in directory.iterdir() if _NAME.fullmatch(p.name) and p.is_dir()]
    return sorted(found, key=lambda p: name_order(p.name), reverse=True)


def _read_latest(directory: Path) -> tuple[Path | None, str | None]:
    """The folder LATEST names, or (None, what is wrong with LATEST); (None, None) when there
    is no LATEST and no checkpoint at all (a run that has not saved yet)."""
    pointer = directory / LATEST
    if not pointer.is_file():
        if _checkpoint_folders(directory):
            return None, f"{pointer} is missing"
        return None, None
    try:
        name = pointer.read_bytes()[:4096].decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None, f"{pointer} holds bytes that are not a checkpoint name"
    if "/" in name or "\\" in name or name in ("", ".", ".."):
        return None, (f"{pointer} points outside this run's checkpoints ({name[:80]!r}); "
                      "LATEST must name a checkpoint folder next to it")
    if not _NAME.fullmatch(name):
        return None, f"{pointer} names {name[:80]!r}, which is not a checkpoint folder name"
    path = directory / name
    if not path.is_dir():
        return None, f"{pointer} names {name}, which does not exist"
    if path.resolve().parent != directory.resolve():  # a link into another run
        return None, (f"{pointer} names {name}, which links outside this run "
                      f"({path.resolve()})")
    return path, None


_VERIFIED: dict[tuple, bool] = {}  # checkpoints already hashed, by their files' stat


def checkpoint_problem(path: Path) -> tuple[str, str] | None:
    """None if the checkpoint at ``path`` verifies, else (file, what is wrong with it).

    A checkpoint that verified is not hashed again while its files keep their size and
    modification time (reopening a large run reads its weights once, not twice)."""
    path = Path(path)
    try:
        key = (str(path.resolve()),) + tuple(
            (p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(path.iterdir()))
    except OSError:
        key = None
    if key is not None and key in _VERIFIED:
        return None
    problem = _verify(path)
    if problem is None and key is not None:
        if len(_VERIFIED) > 64:
            _VERIFIED.clear()
        _VERIFIED[key] = True
    return problem


def _verify(path: Path) -> tuple[str, str] | None:
    try:
        return _verify_files(path)
    except FileNotFoundError as exc:  # deleted while it was read (rotated by a live run)
        return Path(exc.filename or path).name, "is missing (deleted while it was read)"


def _verify_files(path: Path) -> tuple[str, str] | None:
    manifest = path / MANIFEST
    if manifest.exists():
        problem = _manifest_problem(path, manifest)
        if problem is not None:
            return problem
    elif _written_with_manifest(path):
        return MANIFEST, "is missing (this checkpoint was written with one)"
    elif not (path / "model.safetensors").is_file():
        return "model.safetensors", "is missing"
    else:  # written before checkpoints carried a manifest: check what can be checked
        problem = _safetensors_problem(path / "model.safetensors")
        if problem is not None:
            return "model.safetensors", problem
    return _state_problem(path)


def _written_with_manifest(path: Path) -> bool:
    try:
        state = json.loads((path / "state.json").read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        return False    # the state's own damage is found by _state_problem
    return isinstance(state, dict) and state.get("manifest") is True


def _manifest_problem(path: Path, manifest: Path) -> tuple[str, str] | None:
    try:
        files = json.loads(manifest.read_bytes().decode("utf-8"))["files"]
        records = {str(name): (int(rec["bytes"]), str(rec["sha256"]))
                   for name, rec in files.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return MANIFEST, "is damaged (not the list of files this checkpoint wrote)"
    if "model.safetensors" not in records or "state.json" not in records:
        return MANIFEST, "does not list model.safetensors and state.json"
    for name, (size, digest) in records.items():
        file = path / name
        if "/" in name or not file.is_file():
            return name, "is missing"
        actual = file.stat().st_size
        if actual != size:
            return name, (f"is {actual:,} bytes but was written as {size:,} "
                          f"({'truncated' if actual < size else 'grown'} since)")
        if _sha256(file) != digest:
            return name, "does not match the sha256 recorded when it was written (damaged)"
    return None


def _safetensors_problem(file: Path) -> str | None:
    """A safetensors file's header must parse and its tensors must fill the file exactly."""
    try:
        with open(file, "rb") as f:
            size = file.stat().st_size
            header_len = int.from_bytes(f.read(8), "little")
            if size < 8 or header_len > size - 8:
                return f"is truncated ({size:,} bytes)"
            header = json.loads(f.read(header_len).decode("utf-8"))
        end = max((int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"),
                  default=0)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return "is damaged (its header does not parse)"
    if 8 + header_len + end != size:
        return f"is {size:,} bytes but its header describes {8 + header_len + end:,} (truncated?)"
    return None


def _state_problem(path: Path) -> tuple[str, str] | None:
    try:
        state = json.loads((path / "state.json").read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return "state.json", "is missing"
    except (OSError, ValueError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return "state.json", "is damaged (not valid JSON)"
    if not isinstance(state, dict):
        return "state.json", "is damaged (not a JSON object)"
    step = state.get("step")
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        return "state.json", f'says "step": {json.dumps(step)}; a step is a whole number >= 0'
    if step != step_of(path):
        return "state.json", f'says "step": {step} in the folder of step {step_of(path)}'
    # the data position a resume reads (absent from imported checkpoints) must have its
    # shape, or the resume would fail half way (the trainer refuses a missing one itself)
    data = state.get("data")
    if isinstance(data, dict) and not isinstance(data.get("sampler"), dict):
        return "state.json", 'has no "data" position a resume can continue from'
    return None


def setup_problem(checkpoint: Path, run_dir: Path) -> str | None:
    """None if the run's setup files (graph.json, tokenizer.json) are the ones ``checkpoint``
    was written with (as far as its manifest recorded them), else one line saying which
    changed and what to do."""
    try:
        recorded = json.loads((Path(checkpoint) / MANIFEST).read_bytes().decode("utf-8"))
        recorded = recorded.get("setup", {}) if isinstance(recorded, dict) else {}
    except (OSError, ValueError):
        return None  # an unreadable manifest is the checkpoint's damage, found by _verify
    for name, digest in recorded.items() if isinstance(recorded, dict) else ():
        if name not in ("graph.json", "tokenizer.json"):
            continue  # a manifest never sends the check outside the run folder
        file = Path(run_dir) / name
        if not file.is_file():
            return f"{file} is missing; restore it from a copy of the run"
        if _sha256(file) != digest:
            return (f"{file} was changed after {Path(checkpoint).name} was written (its "
                    "sha256 differs), so the weights no longer mean what they meant; restore "
                    "it from a copy of the run")
    return None


def read_state(path: Path) -> dict[str, Any]:
    """A checkpoint's state.json (call after it verified)."""
    try:
        state = json.loads((Path(path) / "state.json").read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{Path(path) / 'state.json'} cannot be read ({exc})") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"{Path(path) / 'state.json'} is not a JSON object")
    return state


def load_checkpoint(path: Path, model: torch.nn.Module,
                    optimizer: torch.optim.Optimizer | None = None,
                    device: str | torch.device = "cpu") -> dict[str, Any]:
    """Restore weights (and the optimizer if given) from ``path``; returns the JSON state."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file, load_model

    path = Path(path)
    if not (path / "model.safetensors").exists():
        raise CheckpointError(f"{path} is not a checkpoint (no model.safetensors)")
    try:
        missing, unexpected = load_model(model, str(path / "model.safetensors"), strict=False,
                                         device=str(device))
    except SafetensorError as exc:
        raise CheckpointError(f"{path / 'model.safetensors'} is damaged ({exc}); restore it "
                              "or train again") from None
    except RuntimeError as exc:  # shapes that differ: the graph changed since training
        raise CheckpointError(f"{path}: the weights do not fit this graph "
                              f"({_first_mismatch(str(exc))}); was the graph changed after "
                              "training?") from None
    if unexpected or [k for k in missing if not is_tied_alias(model, k)]:
        raise CheckpointError(
            f"{path}: the weights do not fit this graph (missing {sorted(missing)[:5]}, "
            f"unexpected {sorted(unexpected)[:5]}); was the graph changed after training?")
    state = read_state(path)
    if optimizer is not None and "optimizer" in state:
        try:
            tensors = load_file(str(path / "optimizer.safetensors"), device=str(device))
            optimizer.load_state_dict(_optimizer_join(tensors, state["optimizer"]))
        except (SafetensorError, OSError, ValueError, KeyError, TypeError) as exc:
            raise CheckpointError(f"{path / 'optimizer.safetensors'} does not restore this "
                                  f"run's optimizer ({exc})") from None
    return state


def _first_mismatch(message: str) -> str:
    """torch's one line per mismatched tensor, cut to the first and a count of the rest."""
    lines = [line.strip() for line in message.splitlines() if "size mismatch" in line]
    if not lines:
        return message.strip().splitlines()[0][:300] if message.strip() else "shapes differ"
    first = lines[0].removeprefix("size mismatch for ").rstrip(".")
    more = f" and {len(lines) - 1} more tensors" if len(lines) > 1 else ""
    return f"{first}{more}"


def is_tied_alias(model: torch.nn.Module, key: str) -> bool:
    """save_model stores a tied tensor once; the other name is reported missing but is fine."""
    params = dict(model.named_parameters(remove_duplicate=False))
    if key not in params:
        return False
    target = params[key]
    return any(p is target and k != key for k, p in params.items())
