"""``tfstudio [FILE.json]`` / ``tfstudio gui``: the editor's options; the window is built in
``tfstudio.gui.launch`` (imported only when the command runs, so ``-h`` never loads Qt)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import values
from .errors import UsageError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", type=values.path, help="a graph file (.json) to open; default: the "
                                                "--preset")
    parser.add_argument("--preset", help="start from this built-in architecture "
                        "(see `tfstudio presets`); default: tiny-gpt")
    parser.add_argument("--file", dest="file_option", metavar="FILE", type=values.path,
                        help="a graph file (.json) to open, as the positional FILE; default: "
                             "none")
    parser.add_argument("--theme", choices=("light", "dark"),
                        help="colour theme (default: the last one used, else light)")
    parser.add_argument("--screenshot", metavar="PATH", type=values.path,
                        help="render the window offscreen to this PNG and exit (needs no "
                             "display); default: open the window")
    parser.add_argument("--size", type=values.window_size, default="1600x1000", metavar="WxH",
                        help="window size, width x height in pixels, for --screenshot")
    parser.add_argument("--open-group", metavar="ID",
                        help="show the inside of this top-level group (e.g. layers); default: "
                             "the top level")
    parser.add_argument("--train", type=values.positive_int, metavar="STEPS",
                        help="with --screenshot: train the graph STEPS steps first (the run "
                             "setup's defaults for it), then take the picture; default: no "
                             "training")
    parser.add_argument("--tab", choices=("curves", "attention", "positions", "next-token",
                                          "experts", "runs", "compare", "explain"),
                        help="with --train: the training view to show (default: curves)")
    parser.add_argument("--startup-report", action="store_true", help=argparse.SUPPRESS)


def check_display(screenshot: str | None) -> None:
    """On Linux a window needs an X11 or Wayland display (Qt aborts without one)."""
    headless = os.environ.get("QT_QPA_PLATFORM", "") in ("offscreen", "minimal", "vnc")
    if sys.platform.startswith("linux") and not screenshot and not headless and not (
            os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise UsageError("no display to open the window on (DISPLAY and WAYLAND_DISPLAY are "
                         "unset); run it on a desktop, under `xvfb-run tfstudio`, or render "
                         "offscreen with `tfstudio --screenshot out.png` (or set "
                         "QT_QPA_PLATFORM=offscreen)")


def check_screenshot_path(path: str) -> None:
    """Refuse a --screenshot that cannot be a new file before the window is rendered."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"--screenshot {path} is a folder; give a file name such as "
                         f"{target / 'window.png'}")
    if not target.parent.is_dir():
        raise UsageError(f"--screenshot {path}: the folder {target.parent} does not exist; "
                         "create it or choose another path")


def run(args) -> int:
    if (args.train or args.tab) and not args.screenshot:
        raise UsageError("--train and --tab go with --screenshot (they render a picture after "
                         "a short run); to train interactively, press Train in the window")
    check_display(args.screenshot)
    if args.screenshot:
        check_screenshot_path(args.screenshot)
    from ..gui.launch import run as launch
    return launch(args)
