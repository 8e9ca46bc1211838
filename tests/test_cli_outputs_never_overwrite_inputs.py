"""A command never writes where it reads: `export`, `import-hf` and `train` refuse an --out that
is, contains or lies inside the run or model they read, --force or not, in one line (exit 2),
and the input is left byte for byte as it was (issue 42: `export RUN --out RUN --force` used to
replace the run's config.json and tokenizer)."""
from __future__ import annotations

import hashlib

import pytest

from tfstudio.cli import main
from tfstudio.runs.folder import RunFolder
from tfstudio.runs.checkpoint import load_checkpoint


def fingerprint(folder):
    """Every file under ``folder`` with its sha256."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("fmt", ["hf", "pytorch"])
def test_export_onto_its_own_run_is_refused_even_with_force(finished_run, capsys, fmt):
    before = fingerprint(finished_run)
    code = main(["export", str(finished_run), "--format", fmt, "--out", str(finished_run),
                 "--force"])
    line = one_line(capsys.readouterr().err)
    assert code == 2
    assert line == (f"tfstudio export: --out {finished_run} is the run export reads "
                    f"({finished_run}), and writing there would replace what it reads, "
                    "--force or not; choose a --out outside it")
    assert fingerprint(finished_run) == before
    run = RunFolder(finished_run)  # it still opens as trained: its weights load into its graph
    from tfstudio.compiler import compile_graph
    state = load_checkpoint(run.checkpoint().path, compile_graph(run.graph()))
    assert state["step"] == 2 and run.config().steps == 2


@pytest.mark.parametrize("inside, word", [("hf", "lies inside"), ("..", "contains")])
def test_export_into_or_around_its_run_is_refused(finished_run, capsys, inside, word):
    out = (finished_run / inside).resolve() if inside == ".." else finished_run / inside
    before = fingerprint(finished_run)
    assert main(["export", str(finished_run), "--out", str(out), "--force"]) == 2
    assert f"--out {out} {word} the run export reads" in one_line(capsys.readouterr().err)
    assert fingerprint(finished_run) == before and not (finished_run / "hf").exists()


def test_import_hf_onto_the_model_it_reads_is_refused(finished_run, tmp_path, capsys):
    hf = tmp_path / "hf"
    assert main(["export", str(finished_run), "--out", str(hf)]) == 0
    capsys.readouterr()
    before = fingerprint(hf)
    for out, word in [(hf, "is"), (hf / "run", "lies inside"), (tmp_path, "contains")]:
        assert main(["import-hf", str(hf), "--out", str(out), "--force"]) == 2
        assert (f"--out {out} {word} the model import-hf reads ({hf})"
                in one_line(capsys.readouterr().err))
    assert fingerprint(hf) == before and not (hf / "run").exists()


def test_train_force_onto_the_run_it_starts_from_is_refused(finished_run, capsys):
    before = fingerprint(finished_run)
    code = main(["train", "tiny-gpt", "--out", str(finished_run), "--force", "--init-from",
                 str(finished_run), "--steps", "1", "--corpus", "sample:small", "--tokenizer",
                 "byte"])
    assert code == 2
    assert (f"--out {finished_run} is the run --init-from reads"
            in one_line(capsys.readouterr().err))
    assert fingerprint(finished_run) == before


def test_train_force_over_a_folder_holding_its_corpus_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    corpus = out / "stories.txt"
    corpus.write_text("once upon a time " * 200)
    code = main(["train", "tiny-gpt", "--out", str(out), "--force", "--corpus", str(corpus),
                 "--steps", "1", "--tokenizer", "byte"])
    assert code == 2
    assert f"--out {out} contains the corpus train reads" in one_line(capsys.readouterr().err)
    assert corpus.read_text() == "once upon a time " * 200


def test_an_output_beside_the_input_is_written(finished_run, tmp_path, capsys):
    out = tmp_path / "beside"
    assert main(["export", str(finished_run), "--out", str(out)]) == 0
    assert (out / "config.json").is_file()
