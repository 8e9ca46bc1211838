"""What the Train workspace says when a run starts and ends (gui/training/run_lines.py, no Qt):
the parameter count against the canvas's, and how the run ended; a run's row in the Runs list."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tfstudio.gui.training.history import RunRecord
from tfstudio.gui.training.run_lines import (COLUMNS, canvas_line, checkpoint_note, ended_lines,
                                           loaded_line, opened_line, params_note,
                                           progress_format, runs_row, started_line)
from tfstudio.presets import load_preset
from tfstudio.train.events import Failed, Finished, Started

CANVAS = 132_864   # tiny-gpt's parameters on the canvas: a 256-token vocabulary of width 64


def started(params: int) -> Started:
    return Started(step=0, total_steps=30, params=params, device="cpu", precision="fp32",
                   objective="next-token", graph_name="tiny-gpt")


def test_the_start_line_says_why_the_runs_parameters_differ_from_the_canvases():
    graph = load_preset("tiny-gpt")
    fitted = CANVAS - (256 - 40) * 64   # the embedding (tied head) resized to 40 tokens
    line = started_line(started(fitted), graph, SimpleNamespace(vocab_size=40))
    assert line == (f"Training tiny-gpt: {fitted:,} parameters on cpu (fp32), next-token "
                    f"(the canvas counts {CANVAS:,}: the vocabulary is resized to the "
                    "tokenizer's 40 tokens)")
    # the same count as the canvas: nothing to explain
    assert started_line(started(CANVAS), graph, None) == \
        f"Training tiny-gpt: {CANVAS:,} parameters on cpu (fp32), next-token"


def test_the_parameter_note_names_the_vocabulary_only_when_it_is_known():
    graph = load_preset("tiny-gpt")
    assert params_note(graph, 1_000, object()) == \
        f" (the canvas counts {CANVAS:,}: the vocabulary is resized to the tokenizer's)"
    assert params_note(graph, 1_000, SimpleNamespace(vocab_size=1_500)).endswith(
        "the tokenizer's 1,500 tokens)")
    assert params_note(None, 1_000, None) == ""   # a graph it cannot count: no note, no error


def test_a_finished_run_says_how_far_and_how_long_and_a_failed_one_why():
    done = Finished(step=1_200, reason="completed", final_loss=1.23456, elapsed_s=62.0)
    assert ended_lines("tiny-gpt · 04:33:47", done) == (
        "tiny-gpt · 04:33:47: completed at step 1,200 in 1:02; final loss 1.2346", None)
    stopped = Finished(step=40, reason="stopped", elapsed_s=3.2)  # no loss yet: none said
    assert ended_lines("r", stopped) == ("r: stopped at step 40 in 3 s", None)
    said, error = ended_lines("r", Failed(step=7, reason="nan", message="Lower the lr."))
    assert said == "r: failed at step 7; the curves so far are kept"
    assert error == "Training stopped at step 7: the loss stopped being a number.\nLower the lr."
    assert ended_lines("r", Failed(step=7, reason="oom", message="m"))[1].startswith(
        "Training stopped at step 7: out of memory.")
    assert ended_lines("r", Failed(step=7, reason="disk", message="m"))[1].startswith(
        "Training stopped at step 7: disk.")   # a reason without words of its own: as it is


def test_opening_a_run_says_what_it_holds_what_the_canvas_did_and_whether_setup_is_its_own():
    label = "tiny-gpt · 04:33:47"
    shows = canvas_line(label)
    assert shows == f"the canvas shows the graph of {label} (Ctrl+Z brings yours back)"
    assert opened_line(label, 1_200, 4, shows, config_read=True) == \
        f"Opened {label}: 1,200 logged steps, 4 snapshots; {shows}"
    assert opened_line(label, 6, 0, "", config_read=False) == (
        f"Opened {label}: 6 logged steps, 0 snapshots; its config.json cannot be read, so Run "
        "setup keeps your settings")
    assert canvas_line(label, "a run is training") == \
        "the canvas keeps your graph (a run is training)"
    assert canvas_line(label, unreadable="graph.json: not JSON") == \
        "the canvas keeps your graph: the run's graph cannot be read (graph.json: not JSON)"


def test_loading_weights_names_the_checkpoint_only_when_a_newer_one_was_skipped():
    run = Path("/runs/tiny-gpt/checkpoints")
    used = run / "step-00000040"
    problem = f"{run}/step-00000060/model.safetensors is damaged"
    note = checkpoint_note(used, [problem])
    assert note == ("Loaded the weights of step-00000040, the newest intact checkpoint: skipped "
                    "a newer one because step-00000060/model.safetensors is damaged (nothing "
                    "was deleted)")
    assert "skipped 2 newer ones because a; b" in checkpoint_note(used, ["a", "b"])
    assert checkpoint_note(used, []) == "" and checkpoint_note(None, [problem]) == ""
    assert loaded_line(note, 40) == note
    assert loaded_line("", 1_200, "the canvas shows the graph of r (Ctrl+Z brings yours back)") \
        == ("Loaded the weights of step 1,200: type a prompt, move the sliders, generate; the "
            "canvas shows the graph of r (Ctrl+Z brings yours back)")


def test_one_corpus_has_one_name_in_the_runs_list(tmp_path):
    """The Corpus column showed "sample" (a run from the command line) and "sample:medium"
    (one from the app) for the same stories."""
    records = [RunRecord(path=str(tmp_path / name), architecture="tiny-gpt", corpus=corpus)
               for name, corpus in (("a", "sample"), ("b", "sample:medium"),
                                    ("c", "sample:small"), ("d", "task:reverse"))]
    column = COLUMNS.index("Corpus")
    assert [runs_row(record).cells[column] for record in records] == \
        ["sample:medium", "sample:medium", "sample:small", "task:reverse"]


def test_a_runs_row_leaves_unknown_figures_blank_and_names_its_whole_folder():
    path = "/runs/" + "x" * 80 + "/tiny-gpt-0941"
    row = runs_row(RunRecord(path, "tiny-gpt", "task:reverse", started="2026-11-29 09:41:03",
                             params=0, status="running", steps=0))
    assert row.cells == ["tiny-gpt · 09:41:03", "", "task:reverse", "0", "", "running", path]
    assert row.tips == {"Folder": path}
    done = runs_row(RunRecord(path, "tiny-gpt", params=132_864, status="completed", steps=400,
                              final_loss=0.123456))
    assert done.cells[1] == "132,864" and done.cells[4] == "0.1235"
    assert len(done.cells) == len(COLUMNS) and done.cells[-1] == path


def test_a_run_shown_from_an_older_checkpoint_says_so_on_its_row():
    record = RunRecord("/runs/a", "tiny-gpt", status="completed", steps=20)
    note = "the newest checkpoint is damaged: step 10 is shown"
    row = runs_row(record, note)
    assert row.cells[COLUMNS.index("Status")] == "completed ⚠ older checkpoint used"
    assert row.tips == {"Folder": "/runs/a", "Status": note}
    assert runs_row(record, "").cells[COLUMNS.index("Status")] == "completed"


def test_an_opened_runs_bar_names_it_shortened_to_the_controls_column():
    assert progress_format("tiny-gpt · 09:41:03") == "%v / %m steps (tiny-gpt · 09:41:03)"
    long = progress_format("attention-variants-mqa-seed-7 · 09:41:03")
    assert long.startswith("%v / %m steps (") and "…" in long
    assert len(long) == len("%v / %m steps ()") + 24
