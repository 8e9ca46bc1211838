"""Event-loop latency of the app while it trains, and screenshots of the training views.

The editor's main window with the training panel docked (as ``tfstudio gui`` opens it) trains
tiny-gpt on the reverse task on the CPU, looking inside every 10 steps, while a 10 ms QTimer
measures how late the event loop serves it. During the run the panel switches through its tabs
(curves, attention, positions, next token, experts) and the canvas is coloured by gradient
norm, so every view redraws while the measurement runs. Target: p99 lateness under 100 ms.

    python bench/bench_gui_latency.py                      # measure, print a Markdown table
    python bench/bench_gui_latency.py --screenshots docs/screenshots

With ``--screenshots`` two more short runs follow (tiny-llama on the same corpus and seed, so
the curves compare two architectures; tiny-mixtral for the experts view) and each view is saved
as ``training-<view>.png``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TICK_MS = 10


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


class LatencyProbe:
    """A 10 ms timer; each firing records how much later than due it came."""

    def __init__(self):
        from PySide6.QtCore import Qt, QTimer
        self.samples: list[float] = []
        self.times: list[float] = []  # seconds since start() of each sample
        self.timer = QTimer()
        self.timer.setTimerType(Qt.PreciseTimer)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self._last = None

    def start(self):
        self.samples.clear()
        self.times.clear()
        self._last = self._start = time.perf_counter()
        self.timer.start()

    def stop(self):
        self.timer.stop()

    def _tick(self):
        now = time.perf_counter()
        self.samples.append(max(0.0, (now - self._last) * 1000 - TICK_MS))
        self.times.append(now - self._start)
        self._last = now


def pump(app, seconds: float, until=None):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        if until is not None and until():
            return True
        time.sleep(0.001)
    return False


def configure(panel, corpus="task:reverse", steps=400, probe_every=10):
    s = panel.setup
    s.apply_defaults(force=True)
    s.select_corpus(corpus)
    s.tokenizer.setCurrentText("char")
    s.steps.setValue(steps)
    s.probe_every.setValue(probe_every)
    s.eval_every.setValue(50)


def train(app, window, panel, tab_cycle: bool, probe: LatencyProbe | None):
    run = panel.train()
    tabs = [panel.curves, panel.attention, panel.positions, panel.next_token, panel.experts]
    started = time.perf_counter()
    if probe is not None:
        probe.start()
    i = 0
    while run.active:
        if tab_cycle:
            panel.tabs.setCurrentWidget(tabs[i % len(tabs)])
            i += 1
        pump(app, 1.5, until=lambda: not run.active)
    if probe is not None:
        probe.stop()
    wall = time.perf_counter() - started
    pump(app, 0.3)
    return run, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--screenshots", metavar="DIR", help="save each view as a PNG here")
    parser.add_argument("--json", metavar="FILE", help="write the measurements as JSON")
    args = parser.parse_args()

    import tempfile

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from tfstudio.gui import theme
    from tfstudio.gui.main_window import MainWindow
    from tfstudio.gui.session import EditorSession
    from tfstudio.gui.training import attach
    from tfstudio.presets import load_preset

    theme.apply_theme(app, "light")
    data_dir = Path(tempfile.mkdtemp(prefix="tfstudio-bench-"))
    window = MainWindow(EditorSession(load_preset("tiny-gpt")), data_dir=data_dir)
    window.ask_unsaved = lambda: "discard"
    training = attach(window)
    window.resize(1600, 1000)
    window.show()
    training.show_panel()
    panel = training.panel
    pump(app, 1.0)

    probe = LatencyProbe()
    probe.start()  # the idle event loop, for reference (timer resolution, the machine)
    pump(app, 2.0)
    probe.stop()
    idle = list(probe.samples)

    configure(panel, steps=args.steps)
    panel.telemetry.setCurrentIndex(panel.telemetry.findData("grad_norm"))
    run, wall = train(app, window, panel, tab_cycle=True, probe=probe)
    busy = list(probe.samples)
    worst_at = probe.times[busy.index(max(busy))] if busy else 0.0
    series = run.series
    import torch
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                   f"{platform.python_version()}, torch {torch.__version__}, "
                   f"{torch.get_num_threads()} torch threads",
        "steps": series.steps[-1] if series.steps else 0, "wall_s": wall,
        "tokens_per_s_median": statistics.median(series.tokens_per_s) if series.steps else 0,
        "probes": len(panel.viewed.steps) if panel.viewed else 0,
        "final_loss": series.loss[-1] if series.loss else None,
        "accuracy": series.accuracy[-1] if series.accuracy else None,
        "idle": {"n": len(idle), "p50": percentile(idle, .5), "p99": percentile(idle, .99),
                 "max": max(idle, default=0.0)},
        "training": {"n": len(busy), "p50": percentile(busy, .5), "p95": percentile(busy, .95),
                     "p99": percentile(busy, .99), "max": max(busy, default=0.0),
                     "max_at_s": worst_at,
                     "late_over_50ms": sum(v > 50 for v in busy)},
        "end": run.end_event.kind if run.end_event else None,
    }
    print(json.dumps(result, indent=1))
    t = result["training"]
    print("\n| event loop | timer samples | p50 (ms) | p95 (ms) | p99 (ms) | max (ms) |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| idle | {len(idle)} | {result['idle']['p50']:.1f} | | {result['idle']['p99']:.1f} "
          f"| {result['idle']['max']:.1f} |")
    print(f"| training tiny-gpt | {t['n']} | {t['p50']:.1f} | {t['p95']:.1f} | {t['p99']:.1f} "
          f"| {t['max']:.1f} |")
    print(f"\np99 target < 100 ms: {'met' if t['p99'] < 100 else 'NOT met'}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    if args.screenshots:
        screenshots(app, window, training, panel, Path(args.screenshots), args.steps)
    panel.shutdown()
    return 0 if t["p99"] < 100 else 1


def screenshots(app, window, training, panel, out: Path, steps: int) -> None:
    """A second architecture on the same corpus and seed, an MoE run, then every view."""
    from tfstudio.presets import load_preset

    out.mkdir(parents=True, exist_ok=True)
    pump(app, 1.0, until=lambda: panel.host.ready)
    first = panel.run
    window.load_graph(load_preset("tiny-llama"))
    pump(app, 0.5)
    configure(panel, steps=steps)
    train(app, window, panel, tab_cycle=False, probe=None)
    window.load_graph(load_preset("tiny-mixtral"))
    pump(app, 0.5)
    configure(panel, steps=max(60, steps // 2))
    mixtral, _ = train(app, window, panel, tab_cycle=False, probe=None)
    pump(app, 5.0, until=lambda: panel.host.ready)

    dock = training.dock
    dock.setFloating(True)
    dock.resize(1500, 920)
    pump(app, 0.5)

    def save(name: str):
        pump(app, 0.4)
        path = out / f"training-{name}.png"
        panel.grab().save(str(path))
        print("wrote", path)

    panel.tabs.setCurrentWidget(panel.experts)
    save("experts")
    panel.tabs.setCurrentWidget(panel.positions)
    save("positions-rope")

    # back to the first run (tiny-gpt on reverse) for the other views
    record = next(r for r in panel.history.records() if r.path == str(first.run_dir))
    panel.open_run(record)
    pump(app, 5.0, until=lambda: panel.host.ready)
    panel.tabs.setCurrentWidget(panel.curves)
    save("curves")
    panel.tabs.setCurrentWidget(panel.attention)
    save("attention")
    panel.attention.head.setCurrentIndex(panel.attention.head.findData("grid"))
    save("attention-heads")
    panel.attention.head.setCurrentIndex(0)
    panel.tabs.setCurrentWidget(panel.positions)
    save("positions-learned")
    panel.tabs.setCurrentWidget(panel.next_token)
    panel.next_token.set_settings(temperature=3.0, top_k=4)
    panel.generate(panel.next_token.prompt.text(), 40)
    pump(app, 10.0, until=lambda: panel.next_token.generate.isEnabled())
    save("next-token")
    panel.tabs.setCurrentWidget(panel.runs)
    save("runs")

    # the editor with the panel docked and the canvas coloured by gradient norm
    from PySide6.QtCore import Qt
    dock.setFloating(False)
    window.tabifyDockWidget(window.problems_dock, dock)
    dock.raise_()
    window.resize(1600, 1100)
    window.resizeDocks([dock], [600], Qt.Vertical)
    window.load_graph(load_preset("tiny-gpt"))
    pump(app, 0.5)
    panel.show_snapshot(panel.viewed.store.load(panel.viewed.steps[-1]))
    panel.tabs.setCurrentWidget(panel.curves)
    window.view.fit_to_view()
    pump(app, 0.5)
    path = out / "training-window.png"
    window.grab().save(str(path))
    print("wrote", path)
    del mixtral


if __name__ == "__main__":
    sys.exit(main())
