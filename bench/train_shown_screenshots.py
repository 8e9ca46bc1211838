"""Screenshots of every tab of the Train workspace in the three moments issue 39 names: after
opening a run with no looks (trained as from the command line) right after one with looks,
after moving the step slider back on the run with looks, and with Help > The course open.
The runs are made first with the real trainer (tests/gui_runs.py). One PNG per tab and moment.

    python bench/train_shown_screenshots.py --out /work/notes/shots      # 1366x768
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for the PNGs")
    parser.add_argument("--size", default="1366x768", help="window size (default 1366x768)")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    from gui_runs import past_runs
    from PySide6.QtWidgets import QApplication

    from tfstudio.gui.main_window import MainWindow
    from tfstudio.gui.session import EditorSession
    from tfstudio.gui.training.attach import attach
    from tfstudio.presets import load_preset

    app = QApplication.instance() or QApplication([])
    work = Path(tempfile.mkdtemp(prefix="shown-shots-"))
    made = past_runs(work / "made")
    window = MainWindow(EditorSession(load_preset("tiny-gpt")), data_dir=work / "app")
    window.ask_unsaved = lambda: "discard"
    attach(window)
    window.training.workspace.transient()
    window.resize(width, height)
    window.show()
    window.training.show_panel()
    panel = window.training.panel

    def settle() -> None:
        import time
        for _ in range(3000):
            app.processEvents()
            if not panel.background.busy and not panel.setup._preview_timer.isActive():
                break
            time.sleep(0.01)
        for _ in range(20):
            app.processEvents()

    def add(source: Path) -> None:
        copy = shutil.copytree(source, work / "runs" / source.name, dirs_exist_ok=True)
        panel.add_run_folder(str(copy))
        settle()

    def every_tab(moment: str) -> None:
        for i in range(panel.tabs.count()):
            panel.tabs.setCurrentIndex(i)
            settle()
            name = panel.tabs.tabText(i).lower().replace(" ", "-")
            path = out / f"{moment}-{name}.png"
            window.grab().save(str(path))
            print(f"{path}  {window.width()}x{window.height()}  {panel.step_bar.caption.text()}")

    add(made["looks"])
    panel.step_bar.slider.setValue(panel.step_bar.steps.index(4))
    settle()
    add(made["bare"])
    every_tab("opened-no-looks")
    add(made["looks"])
    panel.step_bar.slider.setValue(panel.step_bar.steps.index(2))
    settle()
    every_tab("slider-at-2")
    window.show_lessons()
    settle()
    window.lessons.list.setCurrentRow(1)
    settle()
    every_tab("course-open")
    panel.shutdown()
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
