"""`tfstudio train` / `tfstudio generate` end to end, bad corpora, and 2-process DDP."""
import json
import os
import subprocess
import sys

import pytest

from tfstudio.cli import main

FAST = ["--steps", "8", "--batch-size", "4", "--seq-len", "32", "--eval-every", "4",
        "--eval-batches", "2", "--warmup-steps", "2"]


def step_losses(run_dir):
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [json.loads(l)["loss"] for l in lines if json.loads(l)["kind"] == "StepMetrics"]


def test_train_then_generate(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "tiny-gpt", "--corpus", "sample:small", "--out", str(run), *FAST]) == 0
    err = capsys.readouterr().err
    assert "completed at step 8" in err and "validation loss" in err
    assert main(["generate", str(run), "--prompt", "Mia", "--max-new-tokens", "20",
                 "--temperature", "0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Mia") and len(out) > len("Mia")
    # resume past the end: a longer run continues from step 8
    assert main(["train", "tiny-gpt", "--out", str(run), "--resume", *FAST[:0],
                 "--steps", "10", "--batch-size", "4", "--seq-len", "32", "--eval-every", "4",
                 "--eval-batches", "2", "--warmup-steps", "2"]) == 0
    assert "completed at step 10" in capsys.readouterr().err


def test_non_utf8_corpus_is_reported_with_the_fix(tmp_path, capsys):
    bad = tmp_path / "notes.txt"
    bad.write_bytes(b"hello world\n" * 50 + b"caf\xe9\n")
    code = main(["train", "tiny-gpt", "--corpus", str(bad), "--out", str(tmp_path / "r"), *FAST])
    err = capsys.readouterr().err
    # a user error (issue 12: one style, exit 2), no longer exit 1
    assert code == 2 and "notes.txt" in err and "UTF-8" in err and "--errors replace" in err
    assert "DataError" not in err
    assert main(["train", "tiny-gpt", "--corpus", str(bad), "--errors", "replace",
                 "--out", str(tmp_path / "r"), *FAST]) == 0


def test_empty_corpus_is_refused(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main(["train", "tiny-gpt", "--corpus", str(empty), "--out", str(tmp_path / "r"),
                 *FAST]) == 2
    assert "empty" in capsys.readouterr().err.lower()


def test_generate_on_a_folder_without_run_says_so(tmp_path, capsys):
    assert main(["generate", str(tmp_path)]) == 2
    assert "not a tfstudio run folder" in capsys.readouterr().err


# a mixture's load-balancing loss is a product of batch statistics (fraction routed x mean
# probability), so each rank's half-batch value differs slightly from the whole batch's
TWO_RANKS = [("tiny-gpt", "ddp", 1e-5), ("tiny-gpt", "fsdp", 1e-5), ("tiny-mixtral", "ddp", 1e-3)]


def two_process_args(graph: str) -> list[str]:
    return ["train", graph, "--corpus", "sample:small", "--steps", "4", "--batch-size", "8",
            "--seq-len", "32", "--eval-every", "0", "--warmup-steps", "1", "--device", "cpu"]


@pytest.fixture(scope="module")
def single_process_run(tmp_path_factory):
    """The reference a graph's two-process runs are held to: the same command trained by one
    process (this one: a second process adds nothing to it), once per graph."""
    root, done = tmp_path_factory.mktemp("single"), {}

    def run(graph):
        if graph not in done:
            assert main(two_process_args(graph) + ["--out", str(root / graph)]) == 0
            done[graph] = root / graph
        return done[graph]
    return run


@pytest.mark.parametrize("graph,parallel,rel", TWO_RANKS)
@pytest.mark.slow
@pytest.mark.xdist_group("torchrun")
def test_two_processes_match_single_process(tmp_path, single_process_run, graph, parallel, rel):
    """Two gloo ranks, each on half of the same global batch, give the single-process loss,
    whether the model is replicated (DDP) or sharded (FSDP2), also when some experts of a
    mixture get no tokens; the run reopens afterwards."""
    from tfstudio.runs.folder import RunFolder
    double = tmp_path / parallel
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                           "--nproc_per_node", "2", "-m", "tfstudio", *two_process_args(graph),
                           "--parallel", parallel, "--out", str(double)],
                          env={**os.environ, "OMP_NUM_THREADS": "1"}, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    single = single_process_run(graph)
    assert step_losses(double) == pytest.approx(step_losses(single), rel=rel, abs=1e-6)
    assert len(step_losses(double)) == 4
    whole = RunFolder(double).load_model()
    assert sum(p.numel() for p in whole.parameters()) == \
        sum(p.numel() for p in RunFolder(single).load_model().parameters())
