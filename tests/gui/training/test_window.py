"""The training panel inside the editor's main window: docked, driven from the Train menu,
refusing graph edits while a run trains, colouring the canvas with telemetry; and the editor
still starts without loading torch."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from tfstudio.graph.edits import MoveNodes, SetParam

torch.set_num_threads(1)
WAIT_MS = 60_000


@pytest.fixture
def window(open_training_window):
    return open_training_window((1500, 1000))


@pytest.mark.slow
def test_train_from_the_menu_edits_refused_while_training_telemetry_on_canvas(window, qtbot):
    training = window.training
    assert training._panel is None  # built when first needed: the editor starts as fast
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Train")
    train, stop = training.train_action, training.stop_action
    assert train in menu.actions() and not stop.isEnabled()
    panel = training.panel
    assert training.dock.widget() is panel and window.training_panel is panel
    s = panel.setup
    s.select_corpus("task:reverse")
    s.tokenizer.setCurrentText("char")
    s.steps.setValue(5000)
    s.batch.setValue(8)
    s.seq_len.setValue(32)
    s.probe_every.setValue(3)

    assert not training.dock.isVisible()  # the editor opens as it always did
    train.trigger()
    assert training.dock.isVisible()
    run = panel.run
    assert run is not None and stop.isEnabled() and not train.isEnabled()
    pause = training.pause_action  # the menu pauses and resumes, as the button does
    pause.trigger()
    assert run.state == "paused" and pause.isEnabled() and pause.text() == "&Resume"
    pause.trigger()
    assert run.state == "running" and pause.text() == "&Pause"

    # an edit of the model is refused with a message; moving a block is fine
    session = window.session
    messages = []
    session.message.connect(messages.append)
    before = session.root.node("embed").params["d_model"]
    assert not session.execute(SetParam((), "embed", "d_model", 32))
    assert session.root.node("embed").params["d_model"] == before
    assert messages and "training" in messages[-1]
    assert session.execute(MoveNodes((), {"embed": (300.0, 40.0)}))
    assert not session.undo()  # undo would change the graph too: refused while training

    # telemetry: the blocks on the canvas take the colours of the latest look inside
    qtbot.waitUntil(lambda: panel.snapshot is not None and bool(panel.snapshot["grad_norm"]),
                    timeout=WAIT_MS)
    panel.telemetry.setCurrentIndex(panel.telemetry.findData("grad_norm"))
    items = window.scene.node_items
    assert items["embed"].telemetry is not None and items["layers"].telemetry is not None
    assert items["layers"].telemetry[1].startswith("‖g‖")
    assert items["tokens"].telemetry is None  # no parameters, no gradient
    window.scene.set_path(("layers",))  # inside the group: its own blocks are coloured
    qtbot.waitUntil(lambda: "attn" in window.scene.node_items, timeout=WAIT_MS)
    assert window.scene.node_items["attn"].telemetry is not None

    stop.trigger()
    qtbot.waitUntil(lambda: run.state == "finished", timeout=WAIT_MS)
    assert train.isEnabled() and not stop.isEnabled()
    assert session.execute(SetParam((), "embed", "d_model", 32))  # editable again

    # the run's weights load for reading: Explain follows them, the grid scores every head
    qtbot.waitUntil(lambda: panel.host.ready, timeout=WAIT_MS)
    explain = next(panel.tabs.widget(i) for i in range(panel.tabs.count())
                   if panel.tabs.tabText(i) == "Explain")
    assert explain.model is panel.host.model
    qtbot.waitUntil(lambda: bool(panel.attention.roles), timeout=WAIT_MS)
    scores = panel.attention.roles["layers.0.attn"]
    assert len(scores["previous_token"]) == len(scores["induction"]) == 4
    assert all(0.0 <= v <= 1.0 for v in scores["previous_token"] + scores["induction"])

    # right-click a block inside the layer: Explain switches off every copy of it
    ablate = next(a for a in window.view.context_actions
                  if a is not None and a.text().startswith("Switch off in Explain"))
    assert window.scene.path == ("layers",)
    window.scene.select_nodes(["attn"])
    ablate.trigger()
    assert explain.ablations() == ["layers.0.attn", "layers.1.attn"]
    assert panel.tabs.currentWidget() is explain
    ablate.trigger()  # again: back on
    assert explain.ablations() == []


def test_the_editor_still_starts_without_torch():
    code = ("import sys; import tfstudio.gui.training.attach, tfstudio.gui.launch; "
            "print('torch' in sys.modules, 'pyqtgraph' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "False False"  # nor the plotting library: a lazy panel


QUIT_WITH_PANEL_OPEN = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from tfstudio.gui.main_window import MainWindow
from tfstudio.gui.session import EditorSession
from tfstudio.gui.training import attach_training as attach
from tfstudio.presets import load_preset

def run():  # as tfstudio.gui.launch does: the window goes when run() returns
    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(EditorSession(load_preset("tiny-gpt")), data_dir=sys.argv[1])
    window.ask_unsaved = lambda: "discard"
    attach(window).show_panel()
    window.show()
    QTimer.singleShot(500, app.quit)
    return app.exec()

sys.exit(run())
"""


@pytest.mark.slow
def test_quitting_with_the_panel_open_exits_cleanly(tmp_path):
    """Quitting stops the panel's threads and timers; nothing is left to crash at exit (the
    bool reference-count guard in gui.qt_compat matters here: plots emit many signals)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", QUIT_WITH_PANEL_OPEN, str(tmp_path)],
                         check=False, capture_output=True, text=True, timeout=180, env=env)
    assert out.returncode == 0, out.stderr
    assert "Fatal Python error" not in out.stderr


def test_signal_emission_cannot_free_true(qapp):
    """PySide6 6.12's stable-ABI build on Python < 3.12 drops a reference to True on every
    signal emitted; the guard makes True and False immortal there (as 3.12 does)."""
    from PySide6.QtCore import QObject, Signal

    from tfstudio.gui.qt_compat import binding_drops_bools, guard_none_refcount

    class Emitter(QObject):
        fired = Signal()

    guard_none_refcount()  # importing tfstudio.gui already ran it once
    emitter = Emitter()
    for _ in range(20000):  # more emissions than True has references on an affected build
        emitter.fired.emit()
    if sys.version_info < (3, 12) and binding_drops_bools():
        assert sys.getrefcount(True) > 2**39 and sys.getrefcount(False) > 2**39


def test_a_deleted_window_takes_its_session_and_training_panel_with_it(qapp, tmp_path):
    """A closed window, once deleted, leaves nothing alive: its session's signals call lambdas
    that refer to the panel and the canvas, so a session outliving its window kept both (and
    the panel's plot menus, top-level widgets) for as long as the app ran."""
    import gc
    import weakref

    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    from tfstudio.gui.main_window import MainWindow
    from tfstudio.gui.session import EditorSession
    from tfstudio.gui.training.attach import attach
    from tfstudio.presets import load_preset

    w = MainWindow(EditorSession(load_preset("tiny-gpt")), data_dir=tmp_path)
    attach(w)
    panel = w.training.panel
    refs = {"window": weakref.ref(w), "session": weakref.ref(w.session),
            "panel": weakref.ref(panel)}
    menus_before = len(QApplication.topLevelWidgets())
    w.close()
    panel.shutdown()
    w.deleteLater()
    del w, panel
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
    assert [name for name, ref in refs.items() if ref() is not None] == []
    assert len(QApplication.topLevelWidgets()) < menus_before


@pytest.mark.slow
def test_a_hugging_face_folder_opens_as_a_run_with_its_graph_on_the_canvas(window, tmp_path):
    import transformers  # a test dependency
    config = transformers.LlamaConfig(vocab_size=300, hidden_size=32, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2,
                                      intermediate_size=48)
    transformers.AutoModelForCausalLM.from_config(config).save_pretrained(tmp_path / "hf")
    run_dir = window.training.open_hf_folder(tmp_path / "hf")
    window.training.panel.background.wait()  # its curves are read off the GUI thread
    assert run_dir is not None and (run_dir / "graph.json").exists()
    graph = window.session.root
    attention = [n for _, n in graph.walk() if n.type == "attention"]
    assert attention and attention[0].param("kv_heads") == 2          # GQA, as the config says
    assert attention[0].param("position") == "rope"
    panel = window.training.panel
    assert str(run_dir) in panel.shown_paths


def test_a_folder_that_is_not_a_checkpoint_is_refused_with_a_message(window, tmp_path):
    errors = []
    window.show_error = lambda text, title="": errors.append(text)
    assert window.training.open_hf_folder(tmp_path) is None
    assert errors and "config.json" in errors[0]
