"""CPU time of one curves redraw (refresh and paint) while a live run grows beside a long
logged one: the curves view alone, offscreen, at the size it has in the Train workspace at
1366x768. CPU time of this thread (``time.thread_time``), so other jobs on the machine move it
little.

    python bench/bench_curves_redraw.py --history 20000 --steps 400
    python bench/bench_curves_redraw.py --history 0 --steps 400      # the same without it
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=20000, help="steps of the logged run")
    parser.add_argument("--steps", type=int, default=400, help="steps the live run grows by")
    parser.add_argument("--smoothing", type=float, default=0.0, help="the slider's weight")
    args = parser.parse_args()

    from PySide6.QtWidgets import QApplication
    app = QApplication.instance() or QApplication(sys.argv[:1])
    from bench_gui_latency import long_history, percentile

    from tfstudio.gui.training.curves_view import CurvesView
    from tfstudio.gui.training.series import RunSeries

    view = CurvesView()
    view.resize(1040, 560)
    view.show()
    view.reader.smoothing.setValue(round(args.smoothing * 100))
    if args.history:
        view.add_series(long_history(args.history))
    live = RunSeries("live", total_steps=args.steps)
    view.add_series(live)
    app.processEvents()
    spent = []
    for step in range(1, args.steps + 1):
        for name, value in (("steps", step), ("loss", 3.0 / step ** 0.3), ("lr", 1e-3),
                            ("grad_norm", 1.0), ("tokens_per_s", 1e4), ("elapsed_s", 0.1 * step)):
            getattr(live, name).append(value)
        if step % 50 == 0:
            live.val_steps.append(step)
            live.val_loss.append(live.loss[-1])
            live.accuracy.append(0.5)
        started = time.thread_time()
        view.refresh()
        view.plots.repaint()
        app.processEvents()
        spent.append((time.thread_time() - started) * 1000)
    spent = spent[5:]  # the first redraws lay the plots out
    print(f"history={args.history} steps={args.steps} smoothing={args.smoothing} "
          f"cpu_ms_per_redraw_p50={percentile(spent, .5):.1f} p90={percentile(spent, .9):.1f} "
          f"first_fifth_mean={sum(spent[:len(spent)//5]) / (len(spent)//5):.1f} "
          f"last_fifth_mean={sum(spent[-(len(spent)//5):]) / (len(spent)//5):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
