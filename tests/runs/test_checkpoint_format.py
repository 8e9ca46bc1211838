"""The checkpoint format's edges (tfstudio/runs/checkpoint.py): writing, numbering and keeping
checkpoints, LATEST, verifying against the manifest, checkpoints without one, loading; against
expectations built here (file sizes counted in the test, names spelled out, a second reading of
the files), on a tiny hand-made model so every test takes milliseconds."""
import json
import os
import shutil
from hashlib import sha256

import pytest
import torch
from safetensors.torch import save_file

from tfstudio.runs import checkpoint as ck
from tfstudio.runs.checkpoint import (CheckpointError, checkpoint_problem, find_checkpoint,
                                      load_checkpoint, name_order, read_state, save_checkpoint)
from train_stand_ins import Tied


class Scalars(torch.optim.Optimizer):
    """Keeps a plain-number slot, a tensor slot with a dot in its name, and state for only
    some parameters: what a checkpoint must carry for any optimizer, not only AdamW's."""

    def __init__(self, params):
        super().__init__(params, {"lr": 0.5})

    def step(self):
        for group in self.param_groups:
            for i, p in enumerate(group["params"]):
                if i == 0:
                    self.state[p]["count"] = 7
                    self.state[p]["m.v"] = torch.full_like(p, 2.5)
                else:
                    self.state[p]["only_scalar"] = 1.25


def save(directory, step, model=None, **kw):
    return save_checkpoint(directory, step, model or Tied(), None, {}, **kw)


def folders(directory):
    return sorted(p.name for p in directory.iterdir() if p.is_dir())


def legacy(path):
    """A checkpoint as written before checkpoints carried a manifest (and said so)."""
    (path / ck.MANIFEST).unlink()
    state = json.loads((path / "state.json").read_text())
    state.pop("manifest", None)
    (path / "state.json").write_text(json.dumps(state))
    return path


def test_the_optimizer_state_of_any_optimizer_survives_the_checkpoint(tmp_path):
    model = Tied()
    opt = Scalars(model.parameters())
    opt.step()
    path = save_checkpoint(tmp_path, 1, model, opt, {})
    fresh = Tied()
    again = Scalars(fresh.parameters())
    load_checkpoint(path, fresh, again)
    restored = again.state_dict()["state"]
    assert set(restored) == {0, 1}
    assert restored[0]["count"] == 7 and torch.equal(restored[0]["m.v"],
                                                      torch.full((5, 3), 2.5))
    assert restored[1] == {"only_scalar": 1.25}


def test_gathered_weights_are_stored_once_per_tie_and_load_back(tmp_path):
    """``weights`` (whole weights gathered from sharded ranks) arrive as separate copies; the
    file keeps the tie's first name only, as save_model does, and loads into the model."""
    model = Tied()
    gathered = {k: v.clone() + 1 for k, v in model.state_dict(keep_vars=False).items()}
    gathered["head.weight"] = gathered["emb.weight"].clone()
    path = save_checkpoint(tmp_path, 3, model, None, {}, weights=gathered)
    from safetensors import safe_open
    with safe_open(str(path / "model.safetensors"), "pt") as f:
        assert sorted(f.keys()) == ["emb.weight", "head.bias"]
    fresh = Tied()
    load_checkpoint(path, fresh)
    assert torch.equal(fresh.emb.weight, gathered["emb.weight"])
    assert fresh.head.weight is fresh.emb.weight
    assert torch.equal(fresh.head.bias, gathered["head.bias"])


def test_a_checkpoint_folder_is_made_with_its_parents(tmp_path):
    path = save(tmp_path / "run" / "checkpoints", 1)
    assert path == tmp_path / "run" / "checkpoints" / "step-00000001"


def test_the_same_step_saved_again_gets_numbered_copies(tmp_path):
    for _ in range(3):
        save(tmp_path, 5, keep_last=0)
    assert folders(tmp_path) == ["step-00000005", "step-00000005.1", "step-00000005.2"]
    assert (tmp_path / "LATEST").read_text() == "step-00000005.2"


def test_two_checkpoints_are_kept_unless_told_otherwise(tmp_path):
    for step in (1, 2, 3):
        save(tmp_path, step)
    assert folders(tmp_path) == ["step-00000002", "step-00000003"]


def test_keep_last_zero_keeps_every_checkpoint_and_a_negative_one_is_refused(tmp_path):
    for step in (1, 2, 3):
        save(tmp_path, step, keep_last=0)
    assert folders(tmp_path) == ["step-00000001", "step-00000002", "step-00000003"]
    with pytest.raises(ValueError) as caught:
        save(tmp_path, 4, keep_last=-1)  # done[:1] would delete the oldest instead
    assert str(caught.value) == "keep_last must be 0 (keep every checkpoint) or more; got -1"
    assert folders(tmp_path) == ["step-00000001", "step-00000002", "step-00000003"]
    assert (tmp_path / "LATEST").read_text() == "step-00000003"


def test_pruning_orders_steps_by_number_past_eight_digits(tmp_path):
    save(tmp_path, 99_999_999, keep_last=0)
    save(tmp_path, 100_000_000, keep_last=1)  # "step-100000000" < "step-99999999" as text
    assert folders(tmp_path) == ["step-100000000"]


def test_the_checkpoint_just_written_is_never_pruned(tmp_path):
    """Saving an older step (a run resumed from an earlier checkpoint) with keep_last=1 keeps
    the new checkpoint LATEST names, though a newer step is in the folder."""
    save(tmp_path, 5, keep_last=0)
    save(tmp_path, 3, keep_last=1)
    assert (tmp_path / "LATEST").read_text() == "step-00000003"
    assert "step-00000003" in folders(tmp_path)
    assert find_checkpoint(tmp_path).path == tmp_path / "step-00000003"


def test_clean_up_errors_never_fail_a_save_and_never_follow_a_link(tmp_path):
    """A stray file named like a partial folder, and an old checkpoint that is a link to a
    folder elsewhere: neither can be removed with rmtree; the save still succeeds and the
    link's target (outside the run) is untouched."""
    run = tmp_path / "checkpoints"
    outside = tmp_path / "elsewhere"
    save(outside, 1, keep_last=0)
    run.mkdir()
    (run / "step-00000001").symlink_to(outside / "step-00000001", target_is_directory=True)
    (run / ".step-00000001.partial").write_text("not a folder")
    save(run, 2, keep_last=1)
    save(run, 3, keep_last=1)
    assert (outside / "step-00000001" / "model.safetensors").is_file()
    assert find_checkpoint(run).path == run / "step-00000003"


def test_a_partial_folder_whose_writer_cannot_be_checked_is_kept(tmp_path):
    """A PID too large for the system cannot be asked about; the folder is treated as a live
    writer's and left alone (clean-up never risks another writer's files)."""
    odd = tmp_path / f".step-00000001.{2**70}.partial"
    odd.mkdir(parents=True)
    save(tmp_path, 2)
    assert odd.is_dir()


def test_a_checkpoint_at_step_zero_verifies(tmp_path):
    path = save(tmp_path, 0)
    assert checkpoint_problem(path) is None
    assert find_checkpoint(tmp_path).path == path
    assert ck.latest_checkpoint(tmp_path) == path
    (path / "state.json").write_text("{")
    assert ck.latest_checkpoint(tmp_path) is None


def test_folder_names_read_as_step_and_copy():
    assert name_order("step-00000005") == (5, 0)
    assert name_order("step-00000005.2") == (5, 2)
    with pytest.raises(ValueError, match="'LATEST' is not a checkpoint folder name"):
        name_order("LATEST")


def test_stray_entries_in_the_checkpoints_folder_are_ignored(tmp_path):
    save(tmp_path, 1)
    save(tmp_path, 100_000_000, keep_last=0)
    (tmp_path / "backup").mkdir()              # a folder that is not a checkpoint
    (tmp_path / "step-00000009").write_text("a file, not a folder")
    (tmp_path / "LATEST").unlink()
    choice = find_checkpoint(tmp_path)
    assert choice.path == tmp_path / "step-100000000"  # newest by number, not by text
    assert choice.skipped == [f"{tmp_path / 'LATEST'} is missing"]


def latest_says(tmp_path, content: bytes) -> str:
    save(tmp_path, 1)
    (tmp_path / "LATEST").write_bytes(content)
    choice = find_checkpoint(tmp_path)
    assert choice.path == tmp_path / "step-00000001"
    [problem] = choice.skipped
    return problem


@pytest.mark.parametrize("name", [".", "..", "..\\other\\step-00000001", "/tmp/step-00000001"])
def test_latest_naming_anything_outside_its_folder_is_refused_as_such(tmp_path, name):
    problem = latest_says(tmp_path, name.encode())
    assert problem == (f"{tmp_path / 'LATEST'} points outside this run's checkpoints "
                       f"({name!r}); LATEST must name a checkpoint folder next to it")


def test_a_long_latest_is_quoted_to_eighty_characters(tmp_path):
    name = "x" * 100
    problem = latest_says(tmp_path, name.encode())
    assert problem == (f"{tmp_path / 'LATEST'} names {'x' * 80!r}, which is not a "
                       "checkpoint folder name")
    problem = latest_says(tmp_path / "second", ("/" + name).encode())
    assert f"({('/' + name)[:80]!r})" in problem


def test_latest_is_read_to_its_first_four_kilobytes(tmp_path):
    """A character cut by the 4096-byte limit makes the pointer unreadable, not a name."""
    problem = latest_says(tmp_path, b"a" * 4095 + "é".encode())
    assert problem == f"{tmp_path / 'LATEST'} holds bytes that are not a checkpoint name"


def test_each_damaged_checkpoint_passed_over_is_named_with_its_file(tmp_path):
    for step in (1, 2, 3):
        save(tmp_path, step, keep_last=0)
    (tmp_path / "step-00000003" / "state.json").write_text("{")
    (tmp_path / "step-00000002" / "model.safetensors").write_bytes(b"x")
    choice = find_checkpoint(tmp_path)
    assert choice.path == tmp_path / "step-00000001"
    s3, s2 = tmp_path / "step-00000003", tmp_path / "step-00000002"
    size3 = (s3 / "state.json").stat().st_size
    assert choice.skipped == [
        f"{s3 / 'state.json'} is {size3:,} bytes but was written as "
        f"{json.loads((s3 / 'manifest.json').read_text())['files']['state.json']['bytes']:,} "
        "(truncated since)",
        f"{s2 / 'model.safetensors'} is 1 bytes but was written as "
        f"{json.loads((s2 / 'manifest.json').read_text())['files']['model.safetensors']['bytes']:,}"
        " (truncated since)"]


def test_a_manifest_entry_without_a_name_is_reported_on_the_folder(tmp_path):
    for step in (1, 2, 3):
        save(tmp_path, step, keep_last=0)
    for step in (2, 3):
        manifest = tmp_path / f"step-0000000{step}" / ck.MANIFEST
        data = json.loads(manifest.read_text())
        data["files"][""] = {"bytes": 0, "sha256": ""}
        manifest.write_text(json.dumps(data))
    choice = find_checkpoint(tmp_path)
    assert choice.path == tmp_path / "step-00000001"
    assert choice.skipped == [f"{tmp_path / 'step-00000003'} is missing",
                              f"{tmp_path / 'step-00000002'} is missing"]


def test_a_grown_file_is_told_from_a_truncated_one(tmp_path):
    path = save(tmp_path, 1)
    weights = path / "model.safetensors"
    size = weights.stat().st_size
    with open(weights, "ab") as f:
        f.write(b"more")
    assert checkpoint_problem(path) == (
        "model.safetensors", f"is {size + 4:,} bytes but was written as {size:,} (grown since)")
    weights.write_bytes(weights.read_bytes()[:size])   # same size again, same bytes
    assert checkpoint_problem(path) is None


def test_the_manifest_must_list_the_weights_and_the_state(tmp_path):
    path = save(tmp_path, 1)
    data = json.loads((path / ck.MANIFEST).read_text())
    del data["files"]["model.safetensors"]
    (path / ck.MANIFEST).write_text(json.dumps(data))
    assert checkpoint_problem(path) == (ck.MANIFEST,
                                        "does not list model.safetensors and state.json")
    (path / ck.MANIFEST).write_text('{"files": 3}')
    assert checkpoint_problem(path) == (
        ck.MANIFEST, "is damaged (not the list of files this checkpoint wrote)")


def test_a_manifest_never_sends_the_check_outside_its_folder(tmp_path):
    """An entry ``../LATEST`` (a real file, listed with its true size and hash) is refused as
    missing: only the checkpoint's own files are read."""
    path = save(tmp_path, 1)
    data = json.loads((path / ck.MANIFEST).read_text())
    latest = tmp_path / "LATEST"
    data["files"]["../LATEST"] = {"bytes": latest.stat().st_size, "sha256": sha256(latest.read_bytes()).hexdigest()}
    (path / ck.MANIFEST).write_text(json.dumps(data))
    assert checkpoint_problem(path) == ("../LATEST", "is missing")
    data["files"]["gone.bin"] = data["files"].pop("../LATEST")
    (path / ck.MANIFEST).write_text(json.dumps(data))
    assert checkpoint_problem(path) == ("gone.bin", "is missing")


def test_a_verified_checkpoint_is_hashed_once_while_its_files_are_unchanged(tmp_path,
                                                                             monkeypatch):
    path = save(tmp_path, 1)
    other = tmp_path / "copy" / "step-00000001"
    shutil.copytree(path, other)  # the same names, sizes and times, in another folder
    hashed = []
    real = ck._sha256
    monkeypatch.setattr(ck, "_sha256", lambda p: hashed.append(p.parent) or real(p))
    ck._VERIFIED.clear()
    listed = json.loads((path / ck.MANIFEST).read_text())["files"]
    assert checkpoint_problem(path) is None and checkpoint_problem(path) is None
    assert hashed == [path] * len(listed)  # each listed file once, on the first call only
    assert checkpoint_problem(other) is None  # another folder is hashed on its own
    assert hashed[len(listed):] == [other] * len(listed)


def test_a_copy_damaged_without_changing_its_size_or_time_is_still_caught(tmp_path):
    path = save(tmp_path, 1)
    assert checkpoint_problem(path) is None
    other = tmp_path / "copy" / "step-00000001"
    shutil.copytree(path, other)
    weights = other / "model.safetensors"
    stat = weights.stat()
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert checkpoint_problem(other) == (
        "model.safetensors", "does not match the sha256 recorded when it was written (damaged)")


def empty_safetensors(path) -> int:
    """A well-formed safetensors file holding no tensor: header only. Returns its size."""
    save_file({}, str(path))
    return path.stat().st_size


def test_legacy_checkpoints_are_checked_for_what_can_be_checked(tmp_path):
    path = legacy(save(tmp_path, 4))
    assert checkpoint_problem(path) is None
    weights = path / "model.safetensors"

    empty = empty_safetensors(weights)  # header fills the file exactly: fine
    assert int.from_bytes(weights.read_bytes()[:8], "little") == empty - 8
    assert checkpoint_problem(path) is None

    header = weights.read_bytes()[:8]   # a header longer by one byte than the file holds
    weights.write_bytes((empty - 7).to_bytes(8, "little") + weights.read_bytes()[8:])
    assert checkpoint_problem(path) == ("model.safetensors", f"is truncated ({empty:,} bytes)")
    assert header  # (the original length field, for the reader)

    weights.write_bytes(b"\x05\x00\x00")  # shorter than the length field itself
    assert checkpoint_problem(path) == ("model.safetensors", "is truncated (3 bytes)")

    weights.write_bytes(bytes(8))  # an empty header: not JSON
    assert checkpoint_problem(path) == ("model.safetensors",
                                        "is damaged (its header does not parse)")


def test_a_legacy_weights_file_of_the_wrong_length_says_both_lengths(tmp_path):
    path = legacy(save(tmp_path, 4))
    weights = path / "model.safetensors"
    data = weights.read_bytes()
    header_len = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + header_len])
    end = max(t["data_offsets"][1] for k, t in header.items() if k != "__metadata__")
    assert 8 + header_len + end == len(data)   # counted here from the header
    weights.write_bytes(data[:-10])
    assert checkpoint_problem(path) == (
        "model.safetensors", f"is {len(data) - 10:,} bytes but its header describes "
                             f"{len(data):,} (truncated?)")
    (path / "model.safetensors").unlink()
    assert checkpoint_problem(path) == ("model.safetensors", "is missing")


def test_a_legacy_state_json_is_checked(tmp_path):
    path = legacy(save(tmp_path, 4))
    state = path / "state.json"
    state.write_text('{"step": 7}')
    assert checkpoint_problem(path) == ("state.json", 'says "step": 7 in the folder of step 4')
    state.write_text("[4]")
    assert checkpoint_problem(path) == ("state.json", "is damaged (not a JSON object)")
    state.write_text("{")
    assert checkpoint_problem(path) == ("state.json", "is damaged (not valid JSON)")
    state.unlink()
    assert checkpoint_problem(path) == ("state.json", "is missing")


def test_read_state_names_the_file(tmp_path):
    path = save(tmp_path, 4)
    (path / "state.json").write_text("[1]")
    with pytest.raises(CheckpointError) as caught:
        read_state(path)
    assert str(caught.value) == f"{path / 'state.json'} is not a JSON object"
    (path / "state.json").unlink()
    with pytest.raises(CheckpointError) as caught:
        read_state(path)
    assert str(caught.value).startswith(f"{path / 'state.json'} cannot be read (")


class Wider(Tied):
    """Tied with one parameter more: the graph changed after training."""

    def __init__(self, extra: int = 1):
        super().__init__()
        self.extra = torch.nn.ParameterList(torch.nn.Parameter(torch.zeros(2))
                                            for _ in range(extra))


def test_loading_defaults_to_the_cpu_and_restores_the_weights(tmp_path):
    model = Tied()
    path = save(tmp_path, 2, model)
    fresh = Tied()
    assert load_checkpoint(path, fresh)["step"] == 2
    assert fresh.emb.weight.device.type == "cpu"
    assert torch.equal(fresh.emb.weight, model.emb.weight)


def test_weights_that_do_not_fit_the_graph_are_refused_naming_the_keys(tmp_path):
    path = save(tmp_path, 2, Wider(extra=6))
    with pytest.raises(CheckpointError) as caught:   # the file has keys the model lacks
        load_checkpoint(path, Tied())
    unexpected = sorted(f"extra.{i}" for i in range(6))[:5]
    assert str(caught.value) == (f"{path}: the weights do not fit this graph (missing [], "
                                 f"unexpected {unexpected}); was the graph changed after "
                                 "training?")
    path = save(tmp_path, 3, Tied())
    with pytest.raises(CheckpointError) as caught:   # the model has keys the file lacks
        load_checkpoint(path, Wider(extra=6))
    assert str(caught.value) == (f"{path}: the weights do not fit this graph (missing "
                                 f"{unexpected}, unexpected []); was the graph changed after "
                                 "training?")


def test_weights_of_other_shapes_and_damaged_files_are_refused_naming_the_path(tmp_path):
    path = save(tmp_path, 2)
    other = Tied()
    other.head.bias = torch.nn.Parameter(torch.zeros(4))
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path, other)
    assert str(caught.value).startswith(f"{path}: the weights do not fit this graph (")
    (path / "model.safetensors").write_bytes(b"\x08" + bytes(7) + b"not json")
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path, Tied())
    message = str(caught.value)
    assert message.startswith(f"{path / 'model.safetensors'} is damaged (")
    assert message.endswith("); restore it or train again")
    (path / "model.safetensors").unlink()
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path, Tied())
    assert str(caught.value) == f"{path} is not a checkpoint (no model.safetensors)"


def test_a_damaged_optimizer_file_is_refused_naming_it(tmp_path):
    model = Tied()
    opt = Scalars(model.parameters())
    opt.step()
    path = save_checkpoint(tmp_path, 1, model, opt, {})
    (path / "optimizer.safetensors").write_bytes(b"junk")
    fresh = Tied()
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path, fresh, Scalars(fresh.parameters()))
    assert str(caught.value).startswith(
        f"{path / 'optimizer.safetensors'} does not restore this run's optimizer (")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_the_cuda_generators_are_saved_and_restored():
    torch.cuda.init()
    state = ck.rng_state()
    assert len(state["cuda"]) == torch.cuda.device_count()
    first = torch.rand(3, device="cuda")
    ck.set_rng_state(json.loads(json.dumps(state)))
    assert torch.equal(torch.rand(3, device="cuda"), first)


def test_a_tie_is_recognised_from_either_name():
    model = Tied()
    assert ck.is_tied_alias(model, "head.weight") and ck.is_tied_alias(model, "emb.weight")
    assert not ck.is_tied_alias(model, "head.bias")
    assert not ck.is_tied_alias(model, "no.such.weight")
