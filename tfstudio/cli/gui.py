"""``tfstudio [FILE.json]`` / ``tfstudio gui``: the editor's options; the window is built in
``tfstudio.gui.launch`` (imported only when the command runs, so ``-h`` never loads Qt)."""
from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", help="a graph file (.json) to open")
    parser.add_argument("--preset", help="start from this built-in architecture "
                        "(see `tfstudio presets`); default: tiny-gpt")
    parser.add_argument("--file", dest="file_option", metavar="FILE",
                        help="same as the positional FILE")
    parser.add_argument("--theme", choices=("light", "dark"),
                        help="colour theme (default: the last one used, else light)")
    parser.add_argument("--screenshot", metavar="PATH",
                        help="render the window offscreen to this PNG and exit")
    parser.add_argument("--size", default="1600x1000", metavar="WxH",
                        help="window size for --screenshot (default 1600x1000)")
    parser.add_argument("--open-group", metavar="ID",
                        help="show the inside of this top-level group (e.g. layers)")
    parser.add_argument("--train", type=_positive, metavar="STEPS",
                        help="with --screenshot: train the graph STEPS steps first (the run "
                             "setup's defaults for it), then take the picture")
    parser.add_argument("--tab", choices=("curves", "attention", "positions", "next-token",
                                          "experts", "runs"),
                        help="with --train: the training view to show (default: curves)")
    parser.add_argument("--startup-report", action="store_true", help=argparse.SUPPRESS)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of steps >= 1; got '{text}'")
    return value


def window_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"--size must look like 1600x1000; got '{text}'") from None
    return w, h



def run(args) -> int:
    args.size = window_size(args.size)
    if (args.train or args.tab) and not args.screenshot:
        raise SystemExit("--train and --tab go with --screenshot (they render a picture "
                         "after a short run); to train interactively, press Train in the window")
    from ..gui.launch import run as launch
    return launch(args)
