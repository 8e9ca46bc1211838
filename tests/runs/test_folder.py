"""A run folder (tfstudio/runs/folder.py): its setup files, reading them back, refusals that name
the file, loading its model."""
import json

import pytest

from tfstudio.runs.checkpoint import find_checkpoint, save_checkpoint
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.folder import RunError, RunFolder
from train_stand_ins import Tied


def save(directory, step, model=None, **kw):
    return save_checkpoint(directory, step, model or Tied(), None, {}, **kw)


@pytest.fixture
def setup_run(tmp_path):
    """A run folder with its setup written (no training): graph, config, tokenizer."""
    import tfstudio
    from tfstudio.data import build_tokenizer
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
