"""Screenshots of every tab of the Train workspace after opening a past run and moving the step
slider back, as issue 27 asks: tiny-gpt trains on ``task:reverse`` in the app (a look inside
every 10 steps, the canvas strip coloured by gradient norm), a second short run follows it, the
first is opened again from Runs, the slider goes to the middle step, and the curves are smoothed
(0.6) with the pointer's readout at that step. One PNG per tab, ``training-<tab>.png``.

    python bench/train_screenshots.py --out docs/screenshots            # 1366x768, 200 steps
    python bench/train_screenshots.py --out /tmp/shots --size 1920x1080 --suffix=-1920x1080
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

# the file each tab's picture goes to (Compare and Explain keep their own pictures of other
# moments: these are theirs after a reopened run; tiny-gpt has no experts to show)
TABS = {"curves": "training-curves", "attention": "training-attention",
        "positions": "training-positions-learned", "next_token": "training-next-token",
        "experts": "training-experts-none", "runs": "training-runs",
        "compare": "training-compare-reopened", "explain": "training-explain-reopened"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for the PNGs")
    parser.add_argument("--size", default="1366x768", help="window size (default 1366x768)")
    parser.add_argument("--steps", type=int, default=200, help="steps of the opened run")
    parser.add_argument("--tabs", default=",".join(TABS), help="which tabs, comma-separated")
    parser.add_argument("--suffix", default="", help="added to each file name (e.g. -1920x1080)")
    args = parser.parse_args()

    from PySide6.QtCore import QPointF
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from bench_gui_latency import configure, pump

    from tfstudio.gui import theme
    from tfstudio.gui.main_window import MainWindow
    from tfstudio.gui.session import EditorSession
    from tfstudio.gui.training.attach import attach
    from tfstudio.presets import load_preset

    theme.apply_theme(app, "light")
    window = MainWindow(EditorSession(load_preset("tiny-gpt")),
                        data_dir=Path(tempfile.mkdtemp(prefix="tfstudio-shots-")))
    window.ask_unsaved = lambda: "discard"
    window.session.root.meta.setdefault("name", "tiny-gpt")
    training = attach(window)
    training.workspace.transient()
    window.resize(*(int(v) for v in args.size.split("x")))
    window.show()
    training.show_panel()
    panel = training.panel
    pump(app, 1.0)
    panel.telemetry.setCurrentIndex(panel.telemetry.findData("grad_norm"))

    def run(steps: int):
        configure(panel, steps=steps, probe_every=10)
        started = panel.train()
        pump(app, 3600, until=lambda: not started.active)
        pump(app, 30.0, until=lambda: panel.host.ready)
        return started

    first = run(args.steps)
    run(20)  # another run after it: opening the first must replace everything of this one
    record = next(r for r in panel.history.records() if r.path == str(first.run_dir))
    panel.open_run(record)
    pump(app, 30.0, until=lambda: panel.host.ready)
    steps = panel.step_bar.steps
    middle = min(steps, key=lambda s: abs(s - args.steps // 2))
    panel.step_bar.slider.setValue(steps.index(middle))
    pump(app, 2.0)
    panel.curves.reader.smoothing.setValue(60)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    views = {panel.tabs.tabText(i).lower().replace(" ", "_"): panel.tabs.widget(i)
             for i in range(panel.tabs.count())}
    for tab in args.tabs.split(","):
        panel.tabs.setCurrentWidget(views[tab])
        pump(app, 3.0)
        if tab == "curves":  # the pointer on the loss plot at the middle step: the readout box
            box = panel.curves.loss_plot.getViewBox()
            low, high = box.viewRange()[1]
            panel.curves.plots.scene().sigMouseMoved.emit(
                box.mapViewToScene(QPointF(middle, (low + high) / 2)))
            pump(app, 0.5)
        path = out / f"{TABS[tab]}{args.suffix}.png"
        window.grab().save(str(path))
        print("wrote", path, "·", panel.step_bar.caption.text() if hasattr(
            panel.step_bar, "caption") else "", flush=True)
    panel.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
