"""Direct tests of the checkpoint format's edges, written for the survivors of mutation testing
(bench/mutation.py over tfstudio/runs/checkpoint.py): each pins behaviour no other test did,
against expectations built here (file sizes counted in the test, names spelled out, a second
reading of the files), on a tiny hand-made model so every test takes milliseconds."""
import json
import os
import shutil

import pytest
import torch
from safetensors.torch import save_file

from tfstudio.runs import checkpoint as ck
from tfstudio.runs.checkpoint import (CheckpointError, checkpoint_problem, find_checkpoint,
                                      load_checkpoint, name_order, read_state, save_checkpoint)


class Tied(torch.nn.Module):
    """An embedding and an output head sharing one matrix, plus a bias: the tie of a language
    model's head in miniature."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(5, 3)
        self.head = torch.nn.Linear(3, 5)
        self.head.weight = self.emb.weight


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
    """A checkpoint as written before checkpoints carried a manifest."""
    (path / ck.MANIFEST).unlink()
    return path


# ---------------------------------------------------------------- writing
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


# ---------------------------------------------------------------- names
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


# ---------------------------------------------------------------- LATEST
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


# ---------------------------------------------------------------- verifying
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
    data["files"]["../LATEST"] = {"bytes": latest.stat().st_size, "sha256": ck._sha256(latest)}
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


# ---------------------------------------------------------------- checkpoints without a manifest
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


# ---------------------------------------------------------------- loading
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


# ================================================================ the memory pre-flight
from tfstudio.runs import preflight  # noqa: E402
from tfstudio.runs.preflight import (MemoryRefusal, check_model_memory,  # noqa: E402
                                     check_training_memory, human_bytes, training_need)


@pytest.fixture(scope="module")
def tiny():
    import tfstudio
    from tfstudio.compiler import compile_graph
    graph = tfstudio.load_graph("tiny-gpt")
    return graph, sum(p.numel() for p in compile_graph(graph).parameters())


def refusal_of(**kw) -> str:
    with pytest.raises(MemoryRefusal) as caught:
        check_training_memory(**kw)
    return str(caught.value)


def test_sizes_are_written_in_decimal_units():
    assert [human_bytes(n) for n in (999, 1000, 10**6, 10**9, 10**12, 999_999_999_999)] == [
        "999 bytes", "1.0 kB", "1.0 MB", "1.0 GB", "1.0 TB", "1,000.0 GB"]


def test_the_need_of_one_process_and_of_shards(tiny):
    graph, n = tiny
    one = training_need(graph, batch=2, seq_len=16, precision="fp32")
    assert (one.weights, one.gradients, one.optimizer) == (4 * n, 4 * n, 8 * n)
    unsharded = training_need(graph, batch=2, seq_len=16, precision="fp32", world_size=3)
    assert (unsharded.weights, unsharded.optimizer) == (4 * n, 8 * n)  # DDP: whole copies
    assert unsharded.activations == one.activations // 3
    sharded = training_need(graph, batch=2, seq_len=16, precision="fp32", world_size=3,
                            sharded=True)
    assert (sharded.weights, sharded.gradients, sharded.optimizer) == (
        4 * n // 3, 4 * n // 3, 8 * n // 3)
    assert all(isinstance(v, int) for v in (sharded.weights, sharded.gradients,
                                            sharded.optimizer, sharded.activations))
    for half in ("bf16", "fp16"):  # autocast halves the activations, not the weights
        need = training_need(graph, batch=2, seq_len=16, precision=half)
        assert need.activations == one.activations // 2 and need.weights == 4 * n


def test_a_run_that_just_fits_is_let_through(tiny):
    graph, _ = tiny
    need = training_need(graph, batch=2, seq_len=16, precision="fp32")
    common = dict(graph=graph, batch=2, seq_len=16, grad_accum=1, precision="fp32",
                  device="cpu")
    check_training_memory(**common, available=need.total)
    refusal_of(**common, available=need.total - 1)
    # two processes on one machine share its memory
    per_process = training_need(graph, batch=2, seq_len=16, precision="fp32", world_size=2)
    assert per_process.total == need.fixed + need.activations // 2
    check_training_memory(**common, world_size=2, available=2 * per_process.total)
    message = refusal_of(**common, world_size=2, available=2 * per_process.total - 1)
    assert f"needs about {human_bytes(per_process.total)} per process x 2 (" in message


def test_processes_sharing_a_machine_each_get_whole_bytes_of_it(tiny):
    """Two processes and 2 x fixed + 1 bytes free: each one's share is `fixed` bytes (the odd
    byte is nobody's), so the weights, gradients and AdamW state alone fill it."""
    graph, _ = tiny
    fixed = training_need(graph, batch=2, seq_len=16, precision="fp32", world_size=2).fixed
    message = refusal_of(graph=graph, batch=2, seq_len=16, grad_accum=1, precision="fp32",
                         device="cpu", world_size=2, available=2 * fixed + 1)
    assert message.split("free; ")[1].startswith(
        f"the model alone (weights, gradients and AdamW state: {human_bytes(fixed)}) does not "
        "fit: pick a smaller preset")


def test_the_whole_refusal_line_with_the_batch_that_fits(tiny):
    """The suggested batch is the largest that keeps the run within four fifths of the free
    memory, counted here from one sequence's activations."""
    graph, n = tiny
    per_row = training_need(graph, batch=1, seq_len=64, precision="fp32").activations
    assert training_need(graph, batch=40, seq_len=64, precision="fp32").activations == 40 * per_row
    fixed = 16 * n
    available = fixed + 30 * per_row
    fits = int((0.8 * available - fixed) // per_row)
    assert fixed + fits * per_row <= 0.8 * available < fixed + (fits + 1) * per_row
    accum = -(-40 // fits) * 3
    message = refusal_of(graph=graph, batch=40, seq_len=64, grad_accum=3, precision="fp32",
                         device="cpu", available=available)
    total = fixed + 40 * per_row
    assert message == (
        f"training tiny-gpt needs about {human_bytes(total)} (weights {human_bytes(4 * n)}, "
        f"gradients {human_bytes(4 * n)}, AdamW state {human_bytes(8 * n)}, activations "
        f"{human_bytes(40 * per_row)} for 40 x 64 tokens; fp32) but this machine has "
        f"{human_bytes(available)} free; use --batch-size {fits} or less (with --grad-accum "
        f"{accum} to keep the effective batch of 120), a shorter --seq-len or a smaller "
        "preset, or pass --no-memory-check to try anyway")
    # exactly one sequence fits: suggested, not "even one sequence does not fit"
    one = int(fixed / 0.8 + per_row / 0.8) + 1
    message = refusal_of(graph=graph, batch=40, seq_len=64, grad_accum=1, precision="fp32",
                         device="cpu", available=one)
    assert "use --batch-size 1 or less (with --grad-accum 40 " in message
    none = int(fixed / 0.8 + per_row / 0.8 / 2)
    message = refusal_of(graph=graph, batch=40, seq_len=64, grad_accum=1, precision="fp32",
                         device="cpu", available=none)
    assert message.split("free; ")[1] == (
        "even one sequence does not fit: use a shorter --seq-len or a smaller preset, or "
        "pass --no-memory-check to try anyway")


def test_the_refusal_names_the_precision_and_an_unnamed_graph(tiny):
    graph, _ = tiny
    for precision, said in (("bf16", "; bf16 activations)"), ("fp16", "; fp16 activations)"),
                            ("fp32", "; fp32)")):
        assert said in refusal_of(graph=graph, batch=2, seq_len=16, grad_accum=1,
                                  precision=precision, device="cpu", available=1000)
    unnamed = graph.copy() if hasattr(graph, "copy") else graph
    saved = dict(unnamed.meta)
    unnamed.meta.pop("name", None)
    try:
        assert refusal_of(graph=unnamed, batch=2, seq_len=16, grad_accum=1, precision="fp32",
                          device="cpu", available=1000).startswith(
            "training this graph needs about ")
    finally:
        unnamed.meta.clear()
        unnamed.meta.update(saved)


def test_on_a_gpu_the_fix_offers_sharding_and_processes_do_not_share(tiny, monkeypatch):
    graph, n = tiny
    asked = []
    monkeypatch.setattr(preflight, "available_memory",
                        lambda device: asked.append(device) or (16 * n, device))
    message = refusal_of(graph=graph, batch=2, seq_len=16, grad_accum=1, precision="fp32",
                         device="cuda:1", world_size=2)
    assert asked == ["cuda:1"]
    assert " but cuda:1 has " in message and "per process" not in message
    assert message.split("free; ")[1] == (
        f"the model alone (weights, gradients and AdamW state: {human_bytes(16 * n)}) does "
        "not fit: pick a smaller preset or fewer or narrower layers or shard it over several "
        "GPUs (torchrun ... --parallel fsdp), or pass --no-memory-check to try anyway")
    on_cpu = refusal_of(graph=graph, batch=2, seq_len=16, grad_accum=1, precision="fp32",
                        device="cpu", available=16 * n)
    assert "shard" not in on_cpu


def test_loading_needs_two_copies_of_the_weights_by_default(tiny, monkeypatch):
    graph, n = tiny
    check_model_memory(graph, available=8 * n)
    with pytest.raises(MemoryRefusal) as caught:
        check_model_memory(graph, available=8 * n - 1)
    assert str(caught.value) == (
        f"loading this model needs about {human_bytes(8 * n)} ({n:,} parameters x 4 bytes x 2 "
        f"copies while loading) but this machine has {human_bytes(8 * n - 1)} free; use a "
        "machine (or --device) with more memory, or a smaller model")
    asked = []
    monkeypatch.setattr(preflight, "available_memory",
                        lambda device: asked.append(device) or (10, "cuda:0"))
    with pytest.raises(MemoryRefusal) as caught:
        check_model_memory(graph, device="cuda:0", dtype="bfloat16", copies=1, what="x",
                           hint="or pass --no-memory-check")
    assert asked == ["cuda:0"]
    assert str(caught.value) == (
        f"x needs about {human_bytes(2 * n)} ({n:,} parameters x 2 bytes x 1 copies while "
        "loading) but cuda:0 has 10 bytes free; use a machine (or --device) with more memory, "
        "or a smaller model, or pass --no-memory-check")


# ================================================================ settings
from tfstudio.runs.config import TrainConfig  # noqa: E402


@pytest.mark.parametrize("name", ["steps", "batch_size", "seq_len", "grad_accum",
                                  "eval_batches", "log_every"])
def test_each_count_must_be_at_least_one(name):
    TrainConfig(**{name: 1}).check()
    with pytest.raises(ValueError) as caught:
        TrainConfig(**{name: 0}).check()
    assert str(caught.value) == f"{name} must be at least 1; got 0"


@pytest.mark.parametrize("settings,message", [
    *(({name: -1}, f"{name} must be 0 or more; got -1") for name in (
        "lr_decay_steps", "warmup_steps", "eval_every", "checkpoint_every", "keep_checkpoints",
        "probe_every")),
    ({"lr": 0.0}, "lr must be positive; got 0.0"),
    ({"precision": "fp8"}, "precision must be auto, fp32, bf16 or fp16; got fp8"),
    ({"parallel": "tp"}, "parallel must be ddp or fsdp; got tp"),
    ({"val_fraction": 0.0}, "val_fraction must be between 0 and 1; got 0.0"),
    ({"val_fraction": 1.0}, "val_fraction must be between 0 and 1; got 1.0"),
])
def test_settings_out_of_range_are_named(settings, message):
    with pytest.raises(ValueError) as caught:
        TrainConfig(**settings).check()
    assert str(caught.value) == message


@pytest.mark.parametrize("settings", [
    *({name: 0} for name in ("lr_decay_steps", "warmup_steps", "eval_every",
                             "checkpoint_every", "keep_checkpoints", "probe_every")),
    {"lr": 1e-9}, {"val_fraction": 0.01}, {"val_fraction": 0.99},
    *({"precision": p} for p in ("auto", "fp32", "bf16", "fp16")),
    *({"parallel": p} for p in ("ddp", "fsdp"))])
def test_settings_at_the_edge_of_their_range_are_accepted(settings):
    TrainConfig(**settings).check()


def test_unknown_settings_are_named_in_order():
    with pytest.raises(ValueError) as caught:
        TrainConfig.from_dict({"zeta": 1, "steps": 3, "alpha": 2})
    assert str(caught.value) == "unknown training settings: alpha, zeta"
    assert TrainConfig.from_dict({"steps": 3}) == TrainConfig(steps=3)


# ================================================================ run folders
from tfstudio.runs.folder import RunError, RunFolder  # noqa: E402


@pytest.fixture
def setup_run(tmp_path):
    """A run folder with its setup written (no training): graph, config, tokenizer."""
    import tfstudio
    from tfstudio.data.tokenizer import build_tokenizer
    folder = RunFolder(tmp_path / "deep" / "run")
    graph = tfstudio.load_graph("tiny-gpt")
    folder.write_setup(graph, TrainConfig(seq_len=16), build_tokenizer("byte"))
    return folder


def test_the_setup_is_written_with_its_parent_folders(setup_run):
    folder = setup_run
    assert folder.exists()
    assert sorted(p.name for p in folder.path.iterdir()) == [
        "config.json", "graph.json", "tokenizer.json"]  # no temporary file left
    assert json.loads(folder.config_path.read_text()) == TrainConfig(seq_len=16).to_dict()
    assert folder.config() == TrainConfig(seq_len=16)
    folder.graph_path.unlink()
    assert not folder.exists()  # both files make a run folder


def test_a_missing_or_damaged_config_is_named(setup_run):
    folder = setup_run
    folder.config_path.write_text('{"steps": 3, "nonsense": 1}')
    with pytest.raises(RunError) as caught:
        folder.config()
    assert str(caught.value) == (
        f"{folder.config_path} is damaged (unknown training settings: nonsense); restore it "
        "from a copy of the run, or start a new run")
    folder.config_path.write_bytes(b"\xff\xfe")
    with pytest.raises(RunError, match="is damaged"):
        folder.config()
    folder.config_path.unlink()
    with pytest.raises(RunError) as caught:
        folder.config()
    assert str(caught.value) == f"{folder.path} is not a tfstudio run folder (no config.json)"


def add_checkpoint(folder, state=None):
    save_checkpoint(folder.checkpoints, 1, Tied(), None, state or {})


def test_the_trained_length_is_the_runs_unless_imported(setup_run):
    folder = setup_run
    graph = folder.graph()
    graph.meta["context_length"] = 96
    from tfstudio.graph import save_graph
    save_graph(graph, folder.graph_path)
    assert folder.trained_length() == 16          # trained here: its own seq_len
    add_checkpoint(folder)
    assert folder.trained_length() == 16
    add_checkpoint(folder, {"imported_from": "hf"})
    assert folder.trained_length() == 96          # imported: the makers' length
    graph.meta["context_length"] = 8
    save_graph(graph, folder.graph_path)
    assert folder.trained_length() == 16          # never shorter than it trained at
    del graph.meta["context_length"]
    save_graph(graph, folder.graph_path)
    assert folder.trained_length() == 16


def test_a_fine_tuned_run_knows_its_sources_length(setup_run):
    folder = setup_run
    folder.write_config(TrainConfig(seq_len=16, init_from="elsewhere"))
    graph = folder.graph()
    graph.meta["context_length"] = 48
    from tfstudio.graph import save_graph
    save_graph(graph, folder.graph_path)
    assert folder.trained_length() == 48


def test_whether_a_folder_ever_saved_a_checkpoint(setup_run):
    folder = setup_run
    assert not folder.has_checkpoints()
    folder.checkpoints.mkdir()
    (folder.checkpoints / ".step-00000001.9.partial").mkdir()
    assert not folder.has_checkpoints()   # half-written only: nothing was ever saved
    (folder.checkpoints / "LATEST").write_text("step-00000001")
    assert folder.has_checkpoints()       # even a dangling pointer says a run was here
    (folder.checkpoints / "LATEST").unlink()
    (folder.checkpoints / "step-00000001").mkdir()
    assert folder.has_checkpoints()


def test_why_no_checkpoint_was_found(setup_run):
    folder = setup_run
    from tfstudio.runs.checkpoint import CheckpointChoice
    assert folder.no_checkpoint_message(CheckpointChoice(None)) == (
        f"{folder.path} has no checkpoint yet; train it first (checkpoints are written at "
        "the end of training and on stop)")
    assert folder.no_checkpoint_message(CheckpointChoice(None, ["a is bad"])) == (
        f"{folder.path} has no intact checkpoint: a is bad; restore the file from a copy, or "
        "train again (--force replaces the run)")
    assert folder.no_checkpoint_message(CheckpointChoice(None, ["a", "b", "c"])) == (
        f"{folder.path} has no intact checkpoint: a (and 2 more); restore the file from a "
        "copy, or train again (--force replaces the run)")


def test_each_skipped_checkpoint_is_noted_once(setup_run):
    folder = setup_run
    add_checkpoint(folder)
    save_checkpoint(folder.checkpoints, 2, Tied(), None, {}, keep_last=0)
    (folder.checkpoints / "step-00000002" / "state.json").write_text("{")
    folder.checkpoint()
    folder.checkpoint()
    [note] = folder.notes
    assert note.startswith(f"skipped a damaged checkpoint: "
                           f"{folder.checkpoints / 'step-00000002' / 'state.json'} ")
    assert note.endswith("; using step-00000001 instead (delete the damaged folder once you "
                         "no longer need it)")
    (folder.checkpoints / "LATEST").write_text("step-00000009")
    folder.notes.clear()
    folder.checkpoint()
    assert folder.notes[0] == (
        f"{folder.checkpoints / 'LATEST'} names step-00000009, which does not exist; using "
        "step-00000001, the newest intact checkpoint (the next checkpoint written rewrites "
        "LATEST)")


def test_loading_a_folder_that_is_not_a_run_or_has_no_checkpoint(setup_run, tmp_path):
    with pytest.raises(RunError) as caught:
        RunFolder(tmp_path / "nothing").load_model()
    assert str(caught.value) == (f"{tmp_path / 'nothing'} is not a tfstudio run folder (no "
                                 "config.json/graph.json)")
    with pytest.raises(RunError) as caught:
        setup_run.load_model()
    assert str(caught.value).startswith(f"{setup_run.path} has no checkpoint yet;")


def test_with_latest_lost_the_newest_step_by_number_is_used_past_eight_digits(tmp_path):
    save(tmp_path, 99_999_999, keep_last=0)
    save(tmp_path, 100_000_000, keep_last=0)  # "step-100000000" < "step-99999999" as text
    (tmp_path / "LATEST").unlink()
    assert find_checkpoint(tmp_path).path == tmp_path / "step-100000000"


def test_no_intact_checkpoint_names_the_first_problem_and_counts_the_others(setup_run):
    from tfstudio.runs.checkpoint import CheckpointChoice
    path = setup_run.path
    one = setup_run.no_checkpoint_message(CheckpointChoice(None, ["a: truncated"]))
    assert one == (f"{path} has no intact checkpoint: a: truncated; restore the file from a "
                   "copy, or train again (--force replaces the run)")
    two = setup_run.no_checkpoint_message(CheckpointChoice(None, ["a: truncated", "b: gone"]))
    assert two.startswith(f"{path} has no intact checkpoint: a: truncated (and 1 more); ")
    three = setup_run.no_checkpoint_message(CheckpointChoice(None, ["a", "b", "c"]))
    assert three.startswith(f"{path} has no intact checkpoint: a (and 2 more); ")


def test_loading_a_run_checks_the_memory_of_the_device_asked_for_by_default(setup_run,
                                                                              monkeypatch):
    """load_model() refuses a model the device cannot hold, naming the run folder, and asks
    the device it was given (not the CPU) how much is free."""
    import tfstudio.runs.preflight as preflight
    from tfstudio.compiler import compile_graph
    from tfstudio.runs.preflight import MemoryRefusal
    save_checkpoint(setup_run.checkpoints, 1, compile_graph(setup_run.graph()), None, {})
    asked = []
    monkeypatch.setattr(preflight, "available_memory",
                        lambda device: asked.append(device) or (1000, str(device)))
    with pytest.raises(MemoryRefusal) as caught:
        setup_run.load_model()
    assert str(caught.value).startswith(f"loading {setup_run.path} needs about ")
    assert asked == ["cpu"]
    with pytest.raises(MemoryRefusal):
        setup_run.load_model(device="cuda:3")
    assert asked == ["cpu", "cuda:3"]
    monkeypatch.setattr(preflight, "available_memory", lambda device: (10**15, str(device)))
    model = setup_run.load_model()
    assert not model.training


# ================================================================ the run lock
def test_a_lock_file_holding_garbage_still_refuses_the_second_writer(tmp_path):
    """The holder's PID is read back for the message; bytes that are not a PID (a damaged or
    foreign file) give "another process", never an exception."""
    from tfstudio.runs.lock import RunLock, RunLocked
    first = RunLock(tmp_path)
    first.acquire()
    try:
        os.pwrite(first._fd, b"\xff\xfe\x00garbage", 0)
        with pytest.raises(RunLocked) as caught:
            RunLock(tmp_path).acquire()  # flock: a second open file conflicts, same process too
        assert str(caught.value) == (
            f"{tmp_path} is being written by another training run (another process); wait "
            "for it to end, stop it, or choose another --out")
        os.ftruncate(first._fd, 0)
        os.pwrite(first._fd, b"4321\n", 0)
        with pytest.raises(RunLocked, match=r"\(process 4321\)"):
            RunLock(tmp_path).acquire()
    finally:
        first.release()
    RunLock(tmp_path).acquire()  # released: free again


# ================================================================ free memory and its limits
def test_free_memory_on_a_gpu_is_what_cuda_reports_for_that_device(monkeypatch):
    asked = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "mem_get_info",
                        lambda device: asked.append(device) or (123.0, 456))
    assert preflight.available_memory("cuda:1") == (123, "cuda:1")
    assert asked == [torch.device("cuda:1")]
    assert isinstance(preflight.available_memory(torch.device("cuda:1"))[0], int)


def test_free_memory_on_the_host_is_capped_by_a_container_limit(monkeypatch):
    import psutil

    class Memory:
        available = 5000
    monkeypatch.setattr(psutil, "virtual_memory", lambda: Memory())
    monkeypatch.setattr(preflight, "_cgroup_room", lambda: 1200)
    assert preflight.available_memory("cpu") == (1200, "this machine")
    monkeypatch.setattr(preflight, "_cgroup_room", lambda: 9000)
    assert preflight.available_memory("cpu") == (5000, "this machine")
    monkeypatch.setattr(preflight, "_cgroup_room", lambda: None)
    assert preflight.available_memory("mps") == (5000, "this machine")


def test_the_container_limit_is_read_from_cgroup_v2(tmp_path):
    room = preflight._cgroup_room
    assert preflight.CGROUP == preflight.Path("/sys/fs/cgroup")
    assert room(tmp_path) is None                       # no cgroup files: no limit
    (tmp_path / "memory.max").write_text("max\n")
    (tmp_path / "memory.current").write_text("300\n")
    assert room(tmp_path) is None                       # "max": unlimited
    (tmp_path / "memory.max").write_text("1000\n")
    assert room(tmp_path) == 700                        # limit minus what is in use
    (tmp_path / "memory.current").write_text("1500\n")
    assert room(tmp_path) == 0                          # over the limit: nothing left
    (tmp_path / "memory.max").write_text("lots\n")
    assert room(tmp_path) is None                       # unreadable: no limit assumed


def test_the_precision_and_the_sharding_reach_the_estimate(tiny):
    graph, n = tiny
    common = dict(graph=graph, batch=8, seq_len=64, grad_accum=1, device="cpu")
    half = training_need(graph, batch=8, seq_len=64, precision="bf16")
    check_training_memory(**common, precision="bf16", available=half.total)
    shard = training_need(graph, batch=8, seq_len=64, precision="fp32", world_size=2,
                          sharded=True)
    check_training_memory(**common, precision="fp32", world_size=2, sharded=True,
                          available=2 * shard.total)


def test_a_model_at_exactly_four_fifths_of_the_memory_is_told_to_shrink(tiny):
    graph, n = tiny
    available = 20 * n                      # 16 n bytes of weights, gradients and moments
    assert 0.8 * available == 16 * n        # exactly the four fifths kept for the model
    message = refusal_of(graph=graph, batch=64, seq_len=64, grad_accum=1, precision="fp32",
                         device="cpu", available=available)
    assert message.split("free; ")[1] == (
        f"the model alone (weights, gradients and AdamW state: {human_bytes(16 * n)}) leaves "
        "too little of it for activations and working space: pick a smaller preset or fewer "
        "or narrower layers, or pass --no-memory-check to try anyway")
    on_host = refusal_of(graph=graph, batch=64, seq_len=64, grad_accum=1, precision="fp32",
                         device="cpu", available=16 * n)
    assert on_host.split("free; ")[1] == (
        f"the model alone (weights, gradients and AdamW state: {human_bytes(16 * n)}) does "
        "not fit: pick a smaller preset or fewer or narrower layers, or pass "
        "--no-memory-check to try anyway")


def test_a_tie_is_recognised_from_either_name():
    model = Tied()
    assert ck.is_tied_alias(model, "head.weight") and ck.is_tied_alias(model, "emb.weight")
    assert not ck.is_tied_alias(model, "head.bias")
    assert not ck.is_tied_alias(model, "no.such.weight")


def test_the_lock_is_made_with_its_folders_and_the_files_permissions(tmp_path):
    from tfstudio.runs.lock import RunLock
    lock = RunLock(tmp_path / "a" / "b")
    lock.acquire()
    umask = os.umask(0)
    os.umask(umask)
    assert (lock.path.stat().st_mode & 0o777) == 0o644 & ~umask
    assert lock.held and lock.path.read_text() == f"{os.getpid()}\n"
    lock.release()
    assert not lock.held
    assert not (tmp_path / "a" / "b").exists()  # made for the run, left as it was found


def test_releasing_leaves_a_folder_that_was_there_and_empties_the_pid(tmp_path):
    from tfstudio.runs.lock import RunLock
    lock = RunLock(tmp_path)
    lock.acquire()
    lock.release()
    assert tmp_path.is_dir() and lock.path.read_bytes() == b""  # no stale PID left behind
    assert not lock.held


def test_clearing_a_run_forgets_its_training_and_keeps_its_setup(setup_run):
    folder = setup_run
    add_checkpoint(folder)
    (folder.path / "probes").mkdir()
    (folder.path / "probes" / "step-1.json").write_text("{}")
    folder.metrics_path.write_text("{}\n")
    folder.clear()
    assert sorted(p.name for p in folder.path.iterdir()) == [
        "config.json", "graph.json", "tokenizer.json"]
    folder.clear()  # nothing left to clear: still fine
    assert RunFolder.step_of(folder.checkpoints / "step-00000012.1") == 12
