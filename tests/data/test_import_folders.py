"""Folders mean their inside: ``tfstudio import-hf`` and corpus folders read only regular files
whose real path is inside the folder given; a link out is refused, naming it. Every config or
safetensors header fault is one line naming its file, exit 2 (the header's length is checked
before anything is read); a .bin that needs code to load is one line without torch's advice."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tfstudio.cli import main
from tfstudio.data import load_corpus
from tfstudio.data.errors import DataError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """A Hugging Face folder (config.json + model.safetensors) of a fresh tiny-gpt."""
    from tfstudio.export.hf_export import export_hf
    out = tmp_path_factory.mktemp("hf") / "tiny"
    export_hf("tiny-gpt", out)
    assert (out / "config.json").is_file() and (out / "model.safetensors").is_file()
    return out


@pytest.fixture
def hf(exported, tmp_path) -> Path:
    copy = tmp_path / "hf"
    shutil.copytree(exported, copy)
    return copy


def import_line(capsys, folder: Path, tmp_path: Path) -> tuple[int, str]:
    code = main(["import-hf", str(folder), "--out", str(tmp_path / "imported")])
    err = capsys.readouterr().err.strip()
    assert "internal error" not in err and len(err.splitlines()) <= 1, err
    return code, err


def test_the_exported_folder_imports(hf, tmp_path, capsys):
    assert main(["import-hf", str(hf), "--out", str(tmp_path / "imported")]) == 0


def test_weights_linked_from_outside_the_folder_are_refused_naming_the_link(hf, tmp_path,
                                                                            capsys):
    elsewhere = tmp_path / "elsewhere.safetensors"
    (hf / "model.safetensors").rename(elsewhere)  # a valid file, just not inside
    (hf / "model.safetensors").symlink_to(elsewhere)
    code, err = import_line(capsys, hf, tmp_path)
    assert code == 2
    assert err == (f"tfstudio import-hf: {hf / 'model.safetensors'} links outside {hf} (to "
                   f"{elsewhere}); copy the file into the folder instead of linking it")
    assert not (tmp_path / "imported").exists()


def test_a_config_linked_to_a_system_file_is_never_opened(hf, tmp_path, capsys):
    (hf / "config.json").unlink()
    (hf / "config.json").symlink_to("/etc/passwd")
    code, err = import_line(capsys, hf, tmp_path)
    assert code == 2 and "config.json links outside" in err and "/etc/passwd" in err


def test_a_hugging_face_cache_snapshot_links_into_its_blobs_and_imports(exported, tmp_path,
                                                                        capsys):
    repo = tmp_path / "models--me--tiny"
    snapshot, blobs = repo / "snapshots" / "abc123", repo / "blobs"
    snapshot.mkdir(parents=True)
    blobs.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(exported / name, blobs / f"sha-{name}")
        (snapshot / name).symlink_to(Path("../../blobs") / f"sha-{name}")
    assert main(["import-hf", str(snapshot), "--out", str(tmp_path / "imported")]) == 0


def write_header(path: Path, claimed: int, body: bytes = b"{}") -> None:
    path.write_bytes(claimed.to_bytes(8, "little") + body)


@pytest.mark.parametrize("claimed", [400_000_000_000_000, 2 ** 62, 0])
def test_a_safetensors_header_claiming_more_than_the_file_is_refused_before_reading(
        hf, tmp_path, capsys, claimed):
    write_header(hf / "model.safetensors", claimed)
    code, err = import_line(capsys, hf, tmp_path)
    assert code == 2
    assert err == (f"tfstudio import-hf: {hf / 'model.safetensors'}: not a safetensors file "
                   f"(its header claims {claimed:,} bytes; the file has 10); download it again")


def test_a_90_mb_header_of_junk_is_one_line(hf, tmp_path, capsys):
    size = 90 << 20
    with open(hf / "model.safetensors", "wb") as f:
        f.write(size.to_bytes(8, "little"))
        f.truncate(8 + size)  # sparse: 90 MB of zero bytes
    code, err = import_line(capsys, hf, tmp_path)
    assert code == 2 and f"{hf / 'model.safetensors'}: not a readable safetensors file" in err


def test_weights_that_are_a_device_are_refused(hf, tmp_path, capsys):
    (hf / "model.safetensors").unlink()
    (hf / "model.safetensors").symlink_to("/dev/zero")
    code, err = import_line(capsys, hf, tmp_path)
    assert code == 2 and "model.safetensors links outside" in err


def test_a_deeply_nested_config_is_one_line_naming_it(hf, tmp_path, capsys):
    (hf / "config.json").write_text("[" * 200_000 + "]" * 200_000)
    code, err = import_line(capsys, hf, tmp_path)
    assert code == 2
    assert err == f"tfstudio import-hf: {hf / 'config.json'}: nested too deeply to be a " \
                  "model's config"


@pytest.mark.parametrize("text, says", [
    ("", "not valid JSON"),
    (b"\xff\xfe{", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
])
def test_config_errors_name_the_file(hf, tmp_path, capsys, text, says):
    path = hf / "config.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    code, err = import_line(capsys, hf, tmp_path)
    assert code == 2 and err.startswith(f"tfstudio import-hf: {path}: {says}"), err


def test_a_bin_that_needs_code_to_load_is_one_line_without_torchs_advice(hf, tmp_path,
                                                                       capsys):
    (hf / "model.safetensors").unlink()
    torch.save({"x": torch.zeros(2), "why": Path("code")}, hf / "pytorch_model.bin")
    code, err = import_line(capsys, hf, tmp_path)
    assert code == 2
    assert err.startswith(f"tfstudio import-hf: {hf / 'pytorch_model.bin'}: cannot be read as "
                          "plain tensors (it needs the Python object pathlib")
    assert "weights_only=False" not in err and "never runs code" in err


def test_a_corpus_folder_refuses_a_file_linked_from_outside_naming_it(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "story.txt").write_text("once upon a time " * 20)
    (folder / "passwd.txt").symlink_to("/etc/passwd")
    with pytest.raises(DataError) as caught:
        load_corpus(str(folder))
    assert str(caught.value) == (f"{folder / 'passwd.txt'} links outside the corpus folder "
                                 f"{folder} (to /etc/passwd); copy the file into the folder, "
                                 "or remove the link")
    (folder / "passwd.txt").unlink()
    (folder / "again.txt").symlink_to(folder / "story.txt")  # a link inside: fine
    assert load_corpus(str(folder)).kind == "folder"


@pytest.mark.slow
def test_import_hf_of_a_linked_config_is_refused_by_the_real_command_line(hf, tmp_path):
    (hf / "config.json").unlink()
    (hf / "config.json").symlink_to("/etc/passwd")
    done = subprocess.run([sys.executable, "-m", "tfstudio", "import-hf", str(hf), "--out",
                           str(tmp_path / "imported")],
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "links outside" in done.stderr


def test_an_imported_runs_graph_changed_later_is_refused_in_one_line(hf, tmp_path, capsys):
    out = tmp_path / "imported"
    assert main(["import-hf", str(hf), "--out", str(out), "--tokenizer", "byte"]) == 0
    capsys.readouterr()
    graph = out / "graph.json"
    graph.write_text(graph.read_text().replace('"d_model": 64', '"d_model": 32', 1))
    assert main(["generate", str(out), "--max-new-tokens", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"tfstudio generate: {graph} was changed after step-00000000 was written "
                   "(its sha256 differs), so the weights no longer mean what they meant; "
                   "restore it from a copy of the run")


# the tokenizer files are the folder's own too (export/hf_tokenizer.py reads them)
def test_a_tokenizer_linked_to_a_system_file_is_refused_naming_the_link(hf, tmp_path, capsys):
    (hf / "tokenizer.json").symlink_to("/etc/passwd")
    code, err = import_line(capsys, hf, tmp_path)
    assert code == 2
    assert err == (f"tfstudio import-hf: {hf / 'tokenizer.json'} links outside {hf} (to "
                   "/etc/passwd); copy the file into the folder instead of linking it")
    assert not (tmp_path / "imported").exists()


def test_a_valid_tfstudio_tokenizer_linked_from_elsewhere_is_refused_not_imported(
        hf, tmp_path, capsys):
    from tfstudio.data import build_tokenizer
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(build_tokenizer("byte").to_dict()))
    (hf / "tfstudio_tokenizer.json").symlink_to(elsewhere)
    code, err = import_line(capsys, hf, tmp_path)
    assert code == 2
    assert err.startswith(f"tfstudio import-hf: {hf / 'tfstudio_tokenizer.json'} links outside")
    assert not (tmp_path / "imported").exists()


def test_a_vocabulary_linked_out_is_refused_when_choosing_a_tokenizer(hf, tmp_path, capsys):
    """--tokenizer byte reads the folder's vocab.json to find each byte's row."""
    elsewhere = tmp_path / "vocab.json"
    elsewhere.write_text(json.dumps({chr(0x100 + i): i for i in range(256)}))
    (hf / "vocab.json").symlink_to(elsewhere)
    code = main(["import-hf", str(hf), "--out", str(tmp_path / "imported"), "--tokenizer",
                 "byte"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith(f"tfstudio import-hf: {hf / 'vocab.json'} links outside"), err
    assert not (tmp_path / "imported").exists()


def test_a_tokenizer_that_is_not_json_is_one_line_naming_it(hf, tmp_path, capsys):
    (hf / "tokenizer.json").write_bytes(b"\xff\xfe not json")
    code, err = import_line(capsys, hf, tmp_path)
    assert code == 2
    assert err.startswith(f"tfstudio import-hf: {hf / 'tokenizer.json'}: cannot be read (not "
                          "valid JSON")
