import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tiny models train fastest on one thread; on a 2-core CI machine more threads only contend.
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture
def make_window(qtbot, tmp_path):
    """An editor window on ``graph``, shown offscreen, never asking about unsaved changes."""
    from tfstudio.gui.main_window import MainWindow
    from tfstudio.gui.session import EditorSession

    def make(graph):
        w = MainWindow(EditorSession(graph), data_dir=tmp_path)
        w.ask_unsaved = lambda: "discard"
        qtbot.addWidget(w)
        w.resize(1400, 900)
        w.show()
        qtbot.waitExposed(w)
        return w
    return make
