"""Checkpoints verify themselves: every damaged file is named in one line, and the newest intact
checkpoint is used instead, with a note saying which newer one was passed over."""
import hashlib
import json
import shutil

import pytest
import torch

import tfstudio
from tfstudio.cli import main
from tfstudio.runs.checkpoint import find_checkpoint, save_checkpoint
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.folder import RunError, RunFolder
from tfstudio.train.events import read_events
from tfstudio.train.trainer import Trainer

CFG = dict(corpus="sample:small", tokenizer="byte", steps=12, batch_size=4, seq_len=32,
           eval_every=0, warmup_steps=3, checkpoint_every=4, keep_checkpoints=3)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished 12-step run with checkpoints at steps 4, 8 and 12."""
    run = tmp_path_factory.mktemp("trained") / "run"
    assert Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**CFG), run_dir=run).run() \
        .kind == "Finished"
    return run


@pytest.fixture
def run(trained, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(trained, copy)
    return copy


def files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def step_dir(run, step):
    return run / "checkpoints" / f"step-{step:08d}"


def truncate(path, keep=1000):
    path.write_bytes(path.read_bytes()[:keep])


def test_each_checkpoint_records_its_files_sizes_and_hashes(run):
    manifest = json.loads((step_dir(run, 12) / "manifest.json").read_text())["files"]
    assert set(manifest) == {"model.safetensors", "optimizer.safetensors", "state.json"}
    for name, record in manifest.items():
        data = (step_dir(run, 12) / name).read_bytes()
        assert record == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def load_with_notes(run):
    folder = RunFolder(run)
    model = folder.load_model()
    return folder, model


def weights_of(run, step):
    from safetensors.torch import load_file
    return load_file(str(step_dir(run, step) / "model.safetensors"))


def assert_model_has(model, weights):
    state = model.state_dict()
    assert all(torch.equal(state[k], v) for k, v in weights.items())


def test_truncated_weights_fall_back_to_the_previous_checkpoint(run):
    truncate(step_dir(run, 12) / "model.safetensors")
    before = files(run)
    folder, model = load_with_notes(run)
    assert_model_has(model, weights_of(run, 8))
    [note] = folder.notes
    assert "step-00000012/model.safetensors is 1,000 bytes" in note and "truncated" in note
    assert "using step-00000008" in note
    assert files(run) == before  # nothing deleted


def damage_state(run, step, text, keep_manifest):
    (step_dir(run, step) / "state.json").write_text(text)
    if not keep_manifest:  # as a checkpoint written before manifests existed
        (step_dir(run, step) / "manifest.json").unlink()


@pytest.mark.parametrize("keep_manifest", [True, False])
@pytest.mark.parametrize("text,says", [('{"step": 12, "tok', "not valid JSON"),
                                       ("[1, 2]", "not a JSON object"),
                                       ('{"tokens_seen": 3}', '"step": null'),
                                       ('{"step": -5}', '"step": -5'),
                                       ('{"step": "12"}', '"step": "12"')])
def test_damaged_state_json_is_named_and_passed_over(run, text, says, keep_manifest):
    damage_state(run, 12, text, keep_manifest)
    folder, model = load_with_notes(run)
    assert_model_has(model, weights_of(run, 8))
    [note] = folder.notes
    assert "step-00000012/state.json" in note
    if keep_manifest:  # the recorded size or hash no longer matches
        assert "was written as" in note or "sha256" in note
    else:
        assert says in note


@pytest.mark.parametrize("latest,says", [
    (b"step-00000099", "names step-00000099, which does not exist"),
    (bytes(range(200, 256)) * 3, "bytes that are not a checkpoint name"),
    (b"../../other/checkpoints/step-00000004", "points outside this run"),
    (b"", "points outside this run"),
])
def test_a_bad_latest_pointer_falls_back_to_the_newest_intact_checkpoint(run, latest, says):
    (run / "checkpoints" / "LATEST").write_bytes(latest)
    folder, model = load_with_notes(run)
    assert_model_has(model, weights_of(run, 12))
    [note] = folder.notes
    assert "checkpoints/LATEST" in note and says in note and "using step-00000012" in note
    assert "rewrites LATEST" in note


def test_latest_never_follows_a_link_into_another_run(run, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(run, other)
    (step_dir(run, 8)).rename(tmp_path / "moved")
    (run / "checkpoints" / "step-00000008").symlink_to(step_dir(other, 4))
    (run / "checkpoints" / "LATEST").write_text("step-00000008")
    folder = RunFolder(run)
    assert folder.latest() == step_dir(run, 12)
    assert "links outside this run" in folder.notes[0]


def test_with_no_intact_checkpoint_the_refusal_names_the_file(run, capsys):
    for step in (4, 8, 12):
        truncate(step_dir(run, step) / "model.safetensors")
    before = files(run)
    with pytest.raises(RunError) as caught:
        RunFolder(run).load_model()
    message = str(caught.value)
    assert "no intact checkpoint" in message and "step-00000012/model.safetensors" in message
    assert "\n" not in message
    # the commands that read the run say it in one line, with no traceback
    assert main(["generate", str(run), "--max-new-tokens", "3"]) == 2
    assert main(["export", str(run), "--out", str(run.parent / "hf")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("no intact checkpoint" in line for line in err)
    assert "Traceback" not in "".join(err)
    assert files(run) == before


def test_generate_and_export_say_which_checkpoint_they_skipped(run, capsys):
    truncate(step_dir(run, 12) / "model.safetensors")
    assert main(["generate", str(run), "--max-new-tokens", "3", "--temperature", "0"]) == 0
    assert main(["export", str(run), "--out", str(run.parent / "hf")]) == 0
    err = capsys.readouterr().err
    assert err.count("skipped a damaged checkpoint") == 2 and "using step-00000008" in err


def step_losses(run_dir):
    return {e.step: e.loss for e in read_events(RunFolder(run_dir).metrics_path)
            if e.kind == "StepMetrics"}


def test_resume_falls_back_to_an_intact_checkpoint_and_continues_exactly(trained, tmp_path):
    parted = tmp_path / "parted"
    first = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**CFG), run_dir=parted)
    first.listeners.append(lambda e: e.kind == "StepMetrics" and e.step == 8 and first.stop())
    first.run()
    truncate(step_dir(parted, 8) / "model.safetensors")
    with open(RunFolder(parted).metrics_path, "ab") as f:
        f.write(b'{"kind": "StepMetrics", "step": 9, \xff\xfe\x00garbage\n\x80\x81')
    events = []
    end = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**CFG), run_dir=parted,
                  resume=True, listeners=[events.append]).run()
    assert (end.kind, end.step) == ("Finished", 12)
    assert "step-00000008/model.safetensors" in events[0].notes[0]
    assert step_losses(parted) == step_losses(trained)  # from step 4, bit for bit


def test_resume_with_no_intact_checkpoint_names_the_file(run):
    for step in (4, 8, 12):
        (step_dir(run, step) / "state.json").write_text("{")
    end = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**{**CFG, "steps": 20}),
                  run_dir=run, resume=True).run()
    assert end.kind == "Failed" and "step-00000012/state.json" in end.message
    assert "Error" not in end.message and "\n" not in end.message


def test_a_writer_never_touches_another_writers_partial_checkpoint(tmp_path):
    import os
    model = tfstudio.compile_graph(tfstudio.load_graph("tiny-gpt"))
    theirs = tmp_path / f".step-00000003.{os.getppid()}.partial"  # a live process's
    dead = tmp_path / ".step-00000002.999999999.partial"           # no such process
    theirs.mkdir()
    dead.mkdir()
    save_checkpoint(tmp_path, 5, model, None, {})
    assert theirs.exists() and not dead.exists()
    assert find_checkpoint(tmp_path).path == tmp_path / "step-00000005"


def test_nan_message_says_no_checkpoint_exists_when_none_was_written(tmp_path):
    end = Trainer(tfstudio.load_graph("tiny-gpt"),
                  TrainConfig(**{**CFG, "checkpoint_every": 0, "lr": 1e6, "grad_clip": 0}),
                  run_dir=tmp_path).run()
    assert (end.kind, end.reason) == ("Failed", "nan")
    assert "no checkpoint was written yet" in end.message
    assert not RunFolder(tmp_path).has_checkpoints()


def test_a_flipped_byte_is_caught_by_the_hash(run):
    folder = RunFolder(run)
    assert folder.latest() == step_dir(run, 12)  # verified once (and remembered)
    weights = step_dir(run, 12) / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, one tensor value changed
    weights.write_bytes(bytes(data))
    assert folder.latest() == step_dir(run, 8)
    assert "model.safetensors does not match the sha256" in folder.notes[0]
