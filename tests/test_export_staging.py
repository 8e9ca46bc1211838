"""Exports and imports are written beside their destination and moved into place once whole:
under a real file-size limit (``ulimit -f``; Python ignores SIGXFSZ, so the write fails with
EFBIG) every format ends in one line naming the folder, exit 2, with no half-written model under
the final name, no temporary folder left, and a folder that held an earlier export as it was."""
from __future__ import annotations

import errno
import hashlib
import os

import pytest

from tfstudio.cli import main
from tfstudio.export.errors import InteropError
from tfstudio.export.staging import write_staged
from train_stand_ins import file_size_limit

LIMIT = 100_000  # bytes: tiny-gpt's weights are ~530 KB, its config and tokenizer far less


def fingerprint(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def leftovers(parent):
    return sorted(p.name for p in parent.iterdir() if p.name.endswith(".partial"))


@pytest.mark.parametrize("fmt", ["hf", "pytorch",
                                 pytest.param("onnx", marks=pytest.mark.slow)])  # loads onnx
def test_an_export_past_the_file_size_limit_is_one_line_and_leaves_nothing(
        finished_run, tmp_path, capsys, fmt):
    out = tmp_path / "export"
    with file_size_limit(LIMIT):
        code = main(["export", str(finished_run), "--format", fmt, "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1] == (f"tfstudio export: a file in {out} would pass the file-size limit "
                       f"(ulimit -f) while writing the export; nothing was left in {out}; "
                       "raise the limit and export again")
    assert not out.exists() and leftovers(tmp_path) == []


def test_a_forced_export_the_disk_refuses_keeps_the_earlier_export_whole(
        finished_run, tmp_path, capsys):
    out = tmp_path / "export"
    assert main(["export", str(finished_run), "--out", str(out)]) == 0
    before = fingerprint(out)
    with file_size_limit(LIMIT):
        code = main(["export", str(finished_run), "--out", str(out), "--force"])
    assert code == 2
    assert f"; {out} is as it was; raise the limit" in capsys.readouterr().err
    assert fingerprint(out) == before and leftovers(tmp_path) == []


def test_an_import_past_the_file_size_limit_leaves_no_half_written_run(
        finished_run, tmp_path, capsys):
    hf = tmp_path / "hf"
    assert main(["export", str(finished_run), "--out", str(hf)]) == 0
    capsys.readouterr()
    out = tmp_path / "imported"
    with file_size_limit(LIMIT):
        code = main(["import-hf", str(hf), "--out", str(out)])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"tfstudio import-hf: a file in {out} would pass the file-size limit (ulimit -f) while "
        f"writing the import; nothing was left in {out}; raise the limit and import again")
    assert not out.exists() and leftovers(tmp_path) == []  # nothing that reads as a model
    assert main(["import-hf", str(hf), "--out", str(out)]) == 0  # the limit gone, it works


@pytest.mark.parametrize("number, words", [
    (errno.ENOSPC, "the disk of {out} is full"),
    (errno.EROFS, "{out} is on a read-only disk"),
    (errno.EDQUOT, "the disk quota for {out} is used up"),
])
def test_each_refused_write_names_the_folder_and_what_to_do(tmp_path, number, words):
    out = tmp_path / "model"

    def write(staging, _):
        (staging / "config.json").write_text("{}")
        raise OSError(number, os.strerror(number), str(staging / "model.safetensors"))
    with pytest.raises(InteropError) as refused:
        write_staged(out, False, "export", write)
    assert str(refused.value).startswith(words.format(out=out) + " while writing the export; ")
    assert not out.exists() and leftovers(tmp_path) == []


def test_a_whole_write_is_moved_into_place_under_its_final_name(tmp_path):
    out = tmp_path / "model"
    seen = []

    def write(staging, final):
        seen.append((staging.parent == final.parent, staging.name != final.name,
                     final.exists()))
        (staging / "config.json").write_text("{}")
        return "done"
    assert write_staged(out, False, "export", write) == "done"
    assert seen == [(True, True, False)]  # written beside it; the final name came at the end
    assert (out / "config.json").read_text() == "{}" and leftovers(tmp_path) == []
