"""One error style for every command: `tfstudio CMD: what is wrong; what to do`, exit 2, checked
before any output; a bug prints one line, keeps its traceback in a log, and exits 3."""
import json

import pytest

from tfstudio.cli import main

TINY = ["--steps", "2", "--batch-size", "2", "--seq-len", "16", "--eval-every", "0",
        "--warmup-steps", "1"]


def one_line(capsys):
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Error" not in lines[0] and "Traceback" not in lines[0]
    return captured.out, lines[0]


@pytest.fixture(scope="module")
def gpt_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("gpt")
    assert main(["train", "tiny-gpt", "--corpus", "sample:small", "--out", str(run), *TINY]) == 0
    return run


@pytest.mark.parametrize("option,says", [
    (["--temperature", "-1"], "--temperature: takes 0 (greedy) or a number from 0.001 to 100"),
    (["--top-p", "0"], "--top-p: takes a number from 1e-06 to 1"),
    (["--top-k", "-2"], "--top-k: takes a whole number from 0"),
    (["--max-new-tokens", "-5"], "--max-new-tokens: takes a whole number from 1"),
    (["--device", "foo"], "argument --device: takes auto, cpu, cuda, cuda:N or mps; got 'foo'"),
])
def test_generate_checks_its_arguments_before_printing(gpt_run, capsys, option, says):
    assert main(["generate", str(gpt_run), "--prompt", "Mia", *option]) == 2
    out, line = one_line(capsys)
    assert out == "" and line.startswith("tfstudio generate: ") and says in line


def test_generate_on_an_encoder_only_run_says_what_to_do(tmp_path, capsys):
    assert main(["train", "tiny-bert", "--corpus", "sample:small", "--out", str(tmp_path),
                 *TINY]) == 0
    capsys.readouterr()
    assert main(["generate", str(tmp_path), "--prompt", "Mia"]) == 2
    out, line = one_line(capsys)
    assert out == "" and "encoder-only" in line and "tfstudio train tiny-gpt" in line
    assert "view" not in line  # no GUI feature named on the command line


def test_generate_on_a_hugging_face_folder_points_to_import_hf(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    (tmp_path / "model.safetensors").write_bytes(b"")
    assert main(["generate", str(tmp_path)]) == 2
    _, line = one_line(capsys)
    assert f"tfstudio import-hf {tmp_path}" in line


def test_a_long_prompt_is_cut_to_its_end_with_a_note(gpt_run, capsys):
    prompt = "x" * 100 + "Once upon a time"  # the run was trained at 16 tokens
    assert main(["generate", str(gpt_run), "--prompt", prompt, "--max-new-tokens", "5",
                 "--temperature", "0"]) == 0
    captured = capsys.readouterr()
    assert "116 tokens" in captured.err and "last 16" in captured.err
    assert captured.out.startswith(prompt) and len(captured.out) > len(prompt)


def test_stop_text_ends_the_output(gpt_run, capsys):
    args = ["generate", str(gpt_run), "--prompt", "Mia", "--max-new-tokens", "60",
            "--temperature", "0"]
    assert main(args) == 0
    free = capsys.readouterr().out[len("Mia"):-1]
    stop = free[10:12]
    assert main([*args, "--stop", stop]) == 0
    assert capsys.readouterr().out == "Mia" + free[:free.index(stop)] + "\n"


@pytest.mark.parametrize("extra,says", [
    (["--device", "foo"], "argument --device: takes auto, cpu, cuda, cuda:N or mps"),
    (["--precision", "fp64"], "argument --precision: invalid choice"),
    (["--lr", "abc"], "argument --lr: takes a number from 1.2e-38 to 10; got 'abc'; see `tfstudio train -h`"),
])
def test_train_refuses_bad_options_in_one_line(tmp_path, capsys, extra, says):
    assert main(["train", "tiny-gpt", "--out", str(tmp_path / "r"), *TINY, *extra]) == 2
    _, line = one_line(capsys)
    assert line.startswith("tfstudio train: ") and says in line


def test_train_into_a_file_or_over_a_finished_run_is_refused(tmp_path, gpt_run, capsys):
    a_file = tmp_path / "afile"
    a_file.write_text("")
    assert main(["train", "tiny-gpt", "--out", str(a_file), *TINY]) == 2
    assert "is a file, not a folder" in one_line(capsys)[1]
    assert main(["train", "tiny-gpt", "--out", str(gpt_run), *TINY]) == 2
    line = one_line(capsys)[1]
    assert line.startswith("tfstudio train: ") and "--resume" in line


def test_unknown_commands_get_a_suggestion(capsys):
    assert main(["tain", "tiny-gpt"]) == 2
    assert one_line(capsys)[1] == ("tfstudio: 'tain' is not a command or a file; "
                                   "did you mean `tfstudio train`?")
    assert main(["foo"]) == 2
    line = one_line(capsys)[1]
    assert "'foo' is not a command or a file" in line and "inspect" in line


def test_an_internal_error_is_one_line_and_a_log(tmp_path, monkeypatch, capsys):
    import tfstudio.cli.presets as presets
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path))

    def broken(args):
        raise KeyError("boom")

    monkeypatch.setattr(presets, "run", broken)
    assert main(["presets"]) == 3
    _, line = one_line(capsys)
    logs = list((tmp_path / "logs").glob("*.log"))
    assert len(logs) == 1 and str(logs[0]) in line and line.startswith("tfstudio presets: ")
    text = logs[0].read_text()
    assert "Traceback" in text and "KeyError: 'boom'" in text


def test_a_bug_inside_training_keeps_its_traceback_in_a_log(tmp_path, monkeypatch, capsys):
    from tfstudio.train.trainer import Trainer
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path / "cache"))

    def broken(self, start, clock):
        raise KeyError("deep inside the step")

    monkeypatch.setattr(Trainer, "_train", broken)
    code = main(["train", "tiny-gpt", "--corpus", "sample:small", "--out", str(tmp_path / "r"),
                 *TINY])
    assert code == 3
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith("tfstudio train: internal error") and "Traceback" not in line
    [log] = (tmp_path / "cache" / "logs").glob("*.log")
    assert str(log) in line
    text = log.read_text()
    assert "Traceback" in text and "in broken" in text and "deep inside the step" in text


def test_the_editor_without_a_display_says_what_to_do(monkeypatch, capsys):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    assert main([]) == 2
    line = one_line(capsys)[1]
    assert "no display" in line and "--screenshot" in line and "QT_QPA_PLATFORM=offscreen" in line
