"""Files: save and reopen, malformed files, recent files, the unsaved-changes prompt,
autosave with crash recovery, the code view and canvas export."""
from __future__ import annotations

import json

from PySide6.QtGui import QImage

from tfstudio.graph import SetParam, dumps, load_graph_file
from tfstudio.gui.code_lines import code_status
from tfstudio.gui.recovery import AUTOSAVE_NAME, pending_recovery
from tfstudio.presets import load_preset


def edit(window, value=7):
    return window.session.execute(SetParam(("layers",), "attn", "heads", value))


def test_save_reopen_and_compare(make_window, tmp_path):
    w = make_window(load_preset("tiny-llama"))
    w.scene.select_nodes(["layers"])
    w.inspector.switch_layer("layers", "ffn", "moe")
    target = tmp_path / "my model.json"
    w.ask_save_path = lambda *a, **k: str(target)
    assert w.actions.save.isEnabled()
    w.actions.save.trigger()             # no file yet: Save asks where, like Save As
    assert target.exists() and not w.session.dirty
    assert "my model.json" in w.windowTitle() and not w.isWindowModified()
    saved = dumps(w.session.root)

    other = make_window(load_preset("tiny-gpt"), data_dir=tmp_path / "data2")
    assert other.open_file(target)
    assert dumps(other.session.root) == saved
    assert dumps(load_graph_file(target)) == saved
    assert other.session.root.node("layers").subgraph.node("ffn").type == "moe"
    assert other.recent_files()[0] == str(target.resolve())
    assert other.recent_menu.actions()[0].text() == "my model.json"


def test_a_malformed_file_shows_the_reason_and_keeps_the_current_graph(make_window, tmp_path):
    w = make_window(load_preset("tiny-gpt"))
    before = dumps(w.session.root)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format_version": 1, "nodes": [{"id": "a", "type": "warp_drive"}]}')
    assert not w.open_file(bad)
    assert "unknown block type 'warp_drive'" in w.last_error
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    assert not w.open_file(broken)
    assert "not valid JSON (line 1" in w.last_error
    assert dumps(w.session.root) == before


def test_closing_with_unsaved_changes_asks_first(make_window, tmp_path):
    w = make_window(load_preset("tiny-gpt"))
    edit(w)
    assert w.session.dirty and w.isWindowModified()
    asked = []
    w.ask_unsaved = lambda: asked.append(1) or "cancel"
    assert not w.close()
    assert w.isVisible() and asked == [1]
    target = tmp_path / "kept.json"
    w.ask_unsaved = lambda: "save"
    w.ask_save_path = lambda *a, **k: str(target)
    assert w.close()
    assert load_graph_file(target).node("layers").subgraph.node("attn").param("heads") == 7
    # a clean exit leaves nothing to recover
    assert pending_recovery(w.data_dir) is None


def test_autosave_is_offered_back_after_a_crash(make_window, qtbot, tmp_path):
    data = tmp_path / "shared-data"
    crashed = make_window(load_preset("tiny-gpt"), data_dir=data, autosave_interval_ms=50)
    edit(crashed, 2)
    qtbot.waitUntil(lambda: (data / AUTOSAVE_NAME).exists(), timeout=3000)  # the timer wrote it
    expected = dumps(crashed.session.root)
    # the process dies here: no closeEvent, no clean-exit stamp

    fresh = make_window(load_preset("tiny-gpt"), data_dir=data)
    offered = []
    fresh.ask_recover = lambda recovery: offered.append(recovery) or True
    assert fresh.offer_recovery()
    assert len(offered) == 1
    assert dumps(fresh.session.root) == expected
    assert fresh.session.dirty  # recovered work is not saved anywhere yet
    assert fresh.session.root.node("layers").subgraph.node("attn").param("heads") == 2


def test_no_recovery_after_a_clean_exit_and_declining_discards_it(make_window, tmp_path):
    data = tmp_path / "d"
    w = make_window(load_preset("tiny-gpt"), data_dir=data)
    edit(w)
    assert w.autosave.save_now()
    w.ask_unsaved = lambda: "discard"
    assert w.close()
    assert pending_recovery(data) is None

    w2 = make_window(load_preset("tiny-gpt"), data_dir=data)
    edit(w2, 2)
    assert w2.autosave.save_now()
    w3 = make_window(load_preset("tiny-gpt"), data_dir=data)
    w3.ask_recover = lambda recovery: False
    assert not w3.offer_recovery()
    assert not (data / AUTOSAVE_NAME).exists()


def test_saving_removes_the_autosave(make_window, tmp_path):
    w = make_window(load_preset("tiny-gpt"), data_dir=tmp_path / "d")
    edit(w)
    assert w.autosave.save_now()
    w.ask_save_path = lambda *a, **k: str(tmp_path / "x.json")
    assert w.save()
    assert not w.autosave.path.exists()
    assert not w.autosave.save_now()  # nothing unsaved, nothing written


def test_export_canvas_as_png_and_svg(make_window, tmp_path):
    w = make_window(load_preset("llama"))
    png = w.export_canvas("png", str(tmp_path / "canvas.png"))
    image = QImage(str(png))
    assert not image.isNull() and image.width() > 1000
    colours = {image.pixel(x, image.height() // 2) for x in range(0, image.width(), 7)}
    assert len(colours) > 10  # blocks and wires, not a blank picture
    svg = w.export_canvas("svg", str(tmp_path / "canvas.svg"))
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert "LM head" in text  # block titles are real text in the SVG


def test_generated_code_view_compiles_in_the_background(make_window, qtbot):
    w = make_window(load_preset("tiny-gpt"))
    dialog = w.show_code()
    qtbot.waitUntil(lambda: bool(dialog.source or dialog.error), timeout=60000)
    assert dialog.error == ""
    assert "class " in dialog.source and "def forward" in dialog.source
    assert dialog.text.toPlainText() == dialog.source
    assert dialog.status.text() == code_status(dialog.source, "")[0]  # the line, as ruled
    dialog.close()


def test_settings_remember_recent_files_across_windows(make_window, tmp_path):
    data = tmp_path / "d"
    target = tmp_path / "a.json"
    target.write_text(dumps(load_preset("tiny-lstm")))
    w = make_window(load_preset("tiny-gpt"), data_dir=data)
    assert w.open_file(target)
    w2 = make_window(load_preset("tiny-gpt"), data_dir=data)
    assert w2.recent_files() == [str(target.resolve())]
    target.unlink()
    w2._open_recent(str(target.resolve()))  # a file that has gone is dropped from the list
    assert w2.recent_files() == []
    assert "no longer exists" in w2.last_error
    json.dumps(w2.recent_files())


def test_saving_onto_a_full_disk_says_so_and_keeps_the_saved_file(make_window, tmp_path):
    """A real file-size limit (``ulimit -f``) in this process: the save is refused in one
    sentence naming the folder, and the file saved before is left whole (no .tmp beside it)."""
    from train_stand_ins import file_size_limit
    w = make_window(load_preset("tiny-gpt"))
    target = tmp_path / "model.json"
    w.ask_save_path = lambda *a, **k: str(target)
    assert w.save()
    saved = target.read_bytes()
    edit(w)
    with file_size_limit(len(saved) // 2):
        assert not w.save()
    assert w.last_error == (f"a file in {tmp_path} would pass the file-size limit (ulimit -f) "
                            "while saving model.json; model.json is as it was; raise the limit "
                            "and save again")
    assert target.read_bytes() == saved and not list(tmp_path.glob("*.tmp"))
    assert w.session.dirty
