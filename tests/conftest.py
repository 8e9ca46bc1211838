import gc
import os
import sys

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tiny models train fastest on one thread; on a 2-core CI machine more threads only contend.
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(autouse=True, scope="session")
def no_fsync():
    """fsync makes a write outlast a power cut, which no test makes; on this machine's disk each
    took 3.4 ms, and checkpoints, manifests and locks made 1,124 of them in the fast tests of
    tests/cli and tests/train (3.9 s). Children that tests start (a run killed mid-write, the
    live reads) keep theirs."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fsync", lambda fd: None)
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    """No cyclic collection while the test files import and pytest rewrites their asserts (the
    rewrite builds millions of short-lived AST nodes, each allocation counting towards the next
    collection, and each full one rescans torch, Qt and every module imported so far); then
    collect once and freeze what collection left, as after a test below."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()
        gc.freeze()


def pytest_collection_modifyitems(items):
    """The files with slow tests first, each whole and in its own order (a file's fixtures are
    then made once per worker, not again for its fast tests). xdist hands out tests in
    collection order, so a long one collected late (torch.compile's, 24 s on a fresh machine)
    kept one worker busy for 20 s after the other had run out; first, the thousands of short
    tests fill in around the long ones."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


_full_collections = 0  # the cyclic collector's full collections when the last test ended


def delete_closed_widgets():
    """Delete now the widgets qtbot closed: its deleteLater waits for an event loop to turn, so
    a window outlived its test, piling up until a later test waited (or, caught by the freeze
    below, for good, its pyqtgraph menus with it: parentless QMenus)."""
    qt = sys.modules.get("PySide6.QtWidgets")
    if qt is not None and qt.QApplication.instance() is not None:
        from PySide6.QtCore import QEvent
        qt.QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """After a test that collected all generations (a panel's shutdown does, on the GUI thread),
    collect once more, now that its widgets are deleted and pytest has let go of its fixtures,
    and freeze what is left: it is what the session keeps (modules, torch, Qt), and the next
    test's full collection then scans only its own objects. Unfrozen, each full collection in a
    GUI test scanned every object the process ever made (about 0.3 s at 700,000 objects), a
    quarter of tests/gui/training's time. Frozen any earlier (in teardown, while the test's
    arguments still held its window), each GUI test's window was kept for good: about 180
    top-level widgets a test, and every later window cost more to build."""
    global _full_collections
    yield
    delete_closed_widgets()  # after every test: left for a later one, they piled up in thousands
    if gc.get_stats()[2]["collections"] > _full_collections:
        gc.collect()
        gc.freeze()
    _full_collections = gc.get_stats()[2]["collections"]


@pytest.fixture
def make_window(qtbot, tmp_path):
    """An editor window on ``graph``, shown offscreen, never asking about unsaved changes; its
    settings and autosaves go to ``data_dir`` (windows given one share them, as sessions do)."""
    from tfstudio.gui.main_window import MainWindow
    from tfstudio.gui.session import EditorSession

    def make(graph, data_dir=None, **options):
        w = MainWindow(EditorSession(graph), data_dir=data_dir or tmp_path / "data", **options)
        w.ask_unsaved = lambda: "discard"
        qtbot.addWidget(w)
        w.resize(1400, 900)
        w.show()
        qtbot.waitExposed(w)
        return w
    return make


@pytest.fixture
def make_panel(qtbot, tmp_path):
    """Training panels on ``graph`` (tiny-gpt by default), shown offscreen; each is shut down
    (its run stopped, its workers joined) when the test ends."""
    from tfstudio.gui.training import TrainingPanel
    from tfstudio.presets import load_preset

    panels = []

    def make(graph=None, data_dir=None, **kwargs):
        graph = graph or load_preset("tiny-gpt")
        panel = TrainingPanel(lambda: graph, data_dir or tmp_path / "data", **kwargs)
        qtbot.addWidget(panel)
        panel.resize(1300, 850)
        panel.show()
        panels.append(panel)
        return panel

    yield make
    collections = gc.get_stats()[2]["collections"]
    for panel in panels:
        panel.close()
    for panel in panels:
        panel.shutdown()  # a panel's shutdown ends in a full collection, on the GUI thread
    if gc.get_stats()[2]["collections"] == collections:  # none did (none was open)
        gc.collect()  # the test's Qt objects die here, on the GUI thread


@pytest.fixture
def open_training_window(qtbot, tmp_path):
    """Editor windows on tiny-gpt with the Train workspace attached, shown offscreen at
    ``size``; windows given one ``data_dir`` share their settings, as sessions do. Each one's
    panel is shut down (its run stopped, its workers joined) when the test ends."""
    from tfstudio.gui.main_window import MainWindow
    from tfstudio.gui.session import EditorSession
    from tfstudio.gui.training.attach import attach
    from tfstudio.presets import load_preset

    windows = []

    def open_window(size=(1366, 768), data_dir=None):
        w = MainWindow(EditorSession(load_preset("tiny-gpt")), data_dir=data_dir or tmp_path)
        w.ask_unsaved = lambda: "discard"
        attach(w)
        qtbot.addWidget(w)
        w.resize(*size)
        w.show()
        qtbot.waitExposed(w)
        windows.append(w)
        return w

    yield open_window
    collections = gc.get_stats()[2]["collections"]
    for w in windows:
        w.close()
    for w in windows:
        if w.training._panel is not None:
            w.training._panel.shutdown()  # which ends in a full collection, on the GUI thread
    if gc.get_stats()[2]["collections"] == collections:  # none did (no panel was open)
        gc.collect()  # the test's Qt objects die here, on the GUI thread


@pytest.fixture
def private_caches(tmp_path, monkeypatch):
    """tfstudio's cache and tiktoken's in the test's own folder, so a data test neither reads
    what another run left nor leaves anything (``pytest.mark.usefixtures("private_caches")``)."""
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))


@pytest.fixture(scope="session")
def tokenizer():
    """The byte tokenizer (256 ids, no state): what the probe and model tests encode with."""
    from tfstudio.data import build_tokenizer
    return build_tokenizer("byte")


@pytest.fixture
def window(open_training_window):
    """An editor window on tiny-gpt with the Train workspace, at 1366x768 (the smallest screen
    the app is laid out for). A test file needing another editor window overrides it."""
    return open_training_window((1366, 768))


@pytest.fixture(scope="module")
def gpt(tokenizer):
    """tiny-gpt (biases and norms off their defaults, see probe_models) and its inputs for TEXT."""
    from probe_models import TEXT, model_of

    from tfstudio.probes import probe_inputs
    model = model_of("tiny-gpt", tokenizer)
    return model, probe_inputs(model, tokenizer, TEXT)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A 2-step run of tiny-gpt (checkpoints at 1 and 2), lr 0.01, warmup 1, seed 7."""
    from train_stand_ins import TINY

    import tfstudio
    from tfstudio.runs.config import TrainConfig
    from tfstudio.train.trainer import Trainer
    root = tmp_path_factory.mktemp("finished")
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"),
                      TrainConfig(**{**TINY, "steps": 2, "checkpoint_every": 1, "lr": 0.01,
                                     "warmup_steps": 1, "seed": 7}), run_dir=root / "run")
    assert trainer.run().reason == "completed"
    return root / "run"
