"""Real X11 drags (issue 40): under Xvfb, xdotool presses, moves and releases the mouse as a
user's hand would, from the palette onto the canvas of an editor window at 1366x768.
- Dropout dropped on tiny-gpt's Token embedding -> Positional encoding wire stands in line
  between them, Positional encoding moved along, the whole still in view;
- Norm dropped on the open layer frame by the Feed-forward goes inside the layer and shows
  in the Feed-forward's column;
- Ctrl+Z, pressed as keys, undoes the drop.
The window runs in a child process on the X server (the tests' own Qt is offscreen); it reads
its widgets' screen positions, lets xdotool act, and reports what the graph became. Skipped
where Xvfb or xdotool is missing (the offscreen tests of the same behaviours run
everywhere: test_gui_drop_where_you_aim.py, test_gui_refit.py)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # an X server and a window: about 15 s


def _xdotool(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True, timeout=30)


def _drag(start: tuple[int, int], end: tuple[int, int], over_end, steps: int = 10) -> None:
    """Press at ``start``, move to ``end`` in steps (a drag starts after a few pixels),
    release once the canvas has felt the block over ``end`` (``over_end()``; a hand that has
    not seen it light up nudges the mouse): the gesture a hand makes."""
    _xdotool("mousemove", str(start[0]), str(start[1]))
    time.sleep(0.1)
    _xdotool("mousedown", "1")
    time.sleep(0.1)
    for k in range(1, steps + 1):
        x = start[0] + (end[0] - start[0]) * k // steps
        y = start[1] + (end[1] - start[1]) * k // steps
        _xdotool("mousemove", str(x), str(y))
        time.sleep(0.03)
    waited = time.time()
    while not over_end() and time.time() < waited + 10:
        time.sleep(0.05)
        if time.time() > waited + 0.5:  # nudged off and back: the canvas feels a move
            _xdotool("mousemove", str(end[0] + 1), str(end[1]))
            _xdotool("mousemove", str(end[0]), str(end[1]))
    _xdotool("mouseup", "1")


def _drive(report: Path, shots: Path) -> None:
    """The child: open the editor on the X display, make the drags, write ``report``."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    from tfstudio.graph import Edge
    from tfstudio.gui.main_window import MainWindow
    from tfstudio.gui.session import EditorSession
    from tfstudio.presets import load_preset

    w = MainWindow(EditorSession(load_preset("tiny-gpt")), data_dir=report.parent / "data")
    w.ask_unsaved = lambda: "discard"
    w.resize(1366, 768)
    w.move(0, 0)
    w.show()

    def settle(seconds: float) -> None:
        end = time.time() + seconds
        while time.time() < end:
            app.processEvents()
            time.sleep(0.01)

    def settle_until(done, seconds: float = 10.0) -> None:
        """Serve Qt's events until ``done()`` (or ``seconds`` pass: the report then shows
        what did not happen), then a moment more for what it sets off (a refit)."""
        end = time.time() + seconds
        while not done() and time.time() < end:
            app.processEvents()
            time.sleep(0.01)
        settle(0.2)

    def act(gesture, done) -> None:
        """Run ``gesture`` (xdotool) in a thread while this one serves Qt's events, until
        ``done()``."""
        worker = threading.Thread(target=gesture)
        worker.start()
        while worker.is_alive():
            app.processEvents()
            time.sleep(0.005)
        settle_until(done)

    class DragMoves(QObject):
        """Where the canvas last felt a dragged block (screen pixels)."""
        at = None

        def eventFilter(self, watched, event) -> bool:
            if event.type() == QEvent.DragMove:
                p = watched.mapToGlobal(event.position().toPoint())
                self.at = (p.x(), p.y())
            return False

    felt = DragMoves()
    w.view.viewport().installEventFilter(felt)

    def drag(start: tuple[int, int], end: tuple[int, int]) -> None:
        felt.at = None
        _drag(start, end, lambda: felt.at == end)

    def palette_point(block_type: str) -> tuple[int, int]:
        from PySide6.QtCore import Qt
        item = next(i for i in w.palette.block_items() if i.data(0, Qt.UserRole + 1) == block_type)
        tree = w.palette.tree
        tree.scrollToItem(item)
        centre = tree.visualItemRect(item).center()
        at = tree.viewport().mapToGlobal(centre)
        return at.x(), at.y()

    def canvas_point(scene_point) -> tuple[int, int]:
        at = w.view.viewport().mapToGlobal(w.view.mapFromScene(scene_point))
        return at.x(), at.y()

    def rect(nid: str):
        r = w.scene.node_items[nid].sceneBoundingRect()
        return [r.left(), r.top(), r.right(), r.bottom()]

    def shot(name: str) -> None:
        w.grab().save(str(shots / name))

    QTest.qWaitForWindowExposed(w, 10_000)
    settle(0.3)
    w.view.fit_to_view()
    settle(0.2)
    out: dict = {"window": [w.width(), w.height()]}
    shot("real-drag-0-open.png")

    # 1. Dropout onto the embeddings wire
    wire = w.scene.wire_items[Edge("embed", "y", "pos", "x")]
    target = canvas_point(wire.mapToScene(wire._path.pointAtPercent(0.5)))
    pos_before = rect("pos")
    start = palette_point("dropout")
    act(lambda: drag(start, target),
        lambda: any(n.type == "dropout" for n in w.session.root))
    shot("real-drag-1-splice.png")
    root = w.session.root
    drops = [n.id for n in root if n.type == "dropout"]
    out["splice"] = {
        "dropouts": drops,
        "wired": bool(drops) and Edge("embed", "y", drops[0], "x") in root.edges
        and Edge(drops[0], "y", "pos", "x") in root.edges,
        "embed": rect("embed"), "drop": rect(drops[0]) if drops else None,
        "pos_before": pos_before, "pos": rect("pos"),
        "status": w.statusBar().currentMessage(),
        "whole": w.view.mapToScene(w.view.viewport().rect()).boundingRect().contains(
            w.view._drawn()),
    }

    # 2. Norm onto the open frame, just under its Feed-forward
    frame = w.scene.node_items["layers"]
    ffn = next(m for m in frame._minis if m.node.id == "ffn")
    target = canvas_point(frame.mapToScene(ffn.rect.center().x(), ffn.rect.bottom() + 12))
    inside_before = set(root.node("layers").subgraph.nodes)
    start = palette_point("norm")
    act(lambda: drag(start, target),
        lambda: set(w.session.root.node("layers").subgraph.nodes) != inside_before)
    shot("real-drag-2-frame.png")
    inside = w.session.root.node("layers").subgraph
    added = [n for n in inside.nodes if n not in inside_before]
    frame = w.scene.node_items["layers"]
    minis = {m.node.id: m.rect for m in frame._minis}
    out["frame"] = {
        "added_inside": added,
        "added_at_top": [n.id for n in w.session.root if n.type == "norm" and n.id != "final_norm"],
        "new_x": minis[added[0]].center().x() if added else None,
        "ffn_x": minis["ffn"].center().x(), "ffn_w": minis["ffn"].width(),
        "status": w.statusBar().currentMessage(),
    }

    # 3. Ctrl+Z as keys: the frame drop is undone
    w.view.setFocus()
    w.activateWindow()
    settle(0.3)
    act(lambda: _xdotool("key", "ctrl+z"),
        lambda: set(w.session.root.node("layers").subgraph.nodes) == inside_before)
    out["undo"] = {"inside": sorted(w.session.root.node("layers").subgraph.nodes),
                   "before": sorted(inside_before)}
    shot("real-drag-3-undo.png")
    report.write_text(json.dumps(out, indent=1))
    w.close()


@pytest.fixture
def display(tmp_path):
    if not (shutil.which("Xvfb") and shutil.which("xdotool")):
        pytest.skip("needs Xvfb and xdotool (apt-get install xvfb xdotool)")
    # Xvfb picks a free display and writes its number once it takes clients
    ready, told = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(told), "-screen", "0", "1366x768x24",
                               "-nolisten", "tcp"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, pass_fds=(told,))
    os.close(told)
    with os.fdopen(ready) as pipe:
        number = pipe.readline().strip()  # "" when it exits without starting
    if not number:
        server.wait(timeout=10)
        pytest.skip("Xvfb did not start")
    yield f":{number}"
    server.terminate()
    server.wait(timeout=10)


def test_real_drags_splice_in_line_and_drop_into_the_frame(display, tmp_path):
    shots = Path(os.environ.get("TFSTUDIO_DRAG_SHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    report = tmp_path / "report.json"
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb", HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
    run = subprocess.run([sys.executable, __file__, str(report), str(shots)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(report.read_text())
    splice = got["splice"]
    assert len(splice["dropouts"]) == 1 and splice["wired"], splice
    embed, drop, pos = splice["embed"], splice["drop"], splice["pos"]
    assert embed[1] == drop[1] == pos[1]                      # one row, in line
    assert embed[2] < drop[0] and drop[2] < pos[0]
    assert pos[0] > splice["pos_before"][0]                   # moved along
    assert "moved along to make room" in splice["status"]
    assert splice["whole"]
    frame = got["frame"]
    assert len(frame["added_inside"]) == 1 and frame["added_at_top"] == [], frame
    assert abs(frame["new_x"] - frame["ffn_x"]) < frame["ffn_w"], frame
    assert got["undo"]["inside"] == got["undo"]["before"]


if __name__ == "__main__":
    _drive(Path(sys.argv[1]), Path(sys.argv[2]))
