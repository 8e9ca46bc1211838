"""What each numeric flag accepts, checked where argparse reads it: every command's parser uses
these ``type=`` functions, so a bad value ends in one line naming the flag and what it takes
(``tfstudio generate: argument --temperature: ...``), exit 2, before anything runs.

Each function rejects nan, inf and values whose later use would fail or quietly do something
else (a temperature of 1e-300 divides the logits into inf; a seed past 2^64 overflows torch)."""
from __future__ import annotations

import argparse
import math
import re

from ..graph.serialize import MAX_SIZE as MAX_COUNT  # the largest size a graph may hold

FLOAT32_MAX = 3.4e38           # torch computes in float32: a larger lr or clip overflows it
TINY = 1.2e-38                 # float32's smallest normal number: 1e-300 would become 0
MAX_SEED = 2**64 - 1           # torch.Generator.manual_seed takes 0 .. 2^64-1
MAX_RUN_SEED = 2**32 - 1       # a run's batch order seeds torch with seed x 1,000,003 + step
MAX_LR = 10.0                  # tiny-gpt trains at 10; 1000 diverged at step 3, 2^70 at once
MIN_TEMPERATURE = 1e-3         # already greedy in effect; far smaller T overflows logits / T
MAX_TEMPERATURE = 100.0        # above it every token is about equally likely: noise, not text
MIN_TOP_P = 1e-6               # already keeps the top token alone; 1e-300 rounded to 0, none
MAX_WINDOW = (8192, 8192)      # wider and taller than an 8K screen; 100000x100000 crashed Qt


def _checked(text: str, accepts: str, ok, whole: bool = False):
    """``text`` as an int (``whole``) or a finite float for which ``ok(value)`` holds; else
    ArgumentTypeError saying what the flag ``accepts`` (argparse names the flag)."""
    try:
        value = int(text) if whole else float(text)
    except (ValueError, OverflowError):
        value = None
    if value is None or not math.isfinite(value) or abs(value) > FLOAT32_MAX or not ok(value):
        raise argparse.ArgumentTypeError(f"takes {accepts}; got '{text}'")
    return value


def finite_float(text: str) -> float:
    return _checked(text, "a number from -3.4e38 to 3.4e38", lambda v: True)


def positive_float(text: str) -> float:
    return _checked(text, "a number from 1.2e-38 to 3.4e38", lambda v: v >= TINY)


def non_negative_float(text: str) -> float:
    return _checked(text, "0 or a number from 1.2e-38 to 3.4e38", lambda v: v == 0 or v >= TINY)


def ratio(text: str) -> float:
    """A share between 0 and 1, both included."""
    return _checked(text, "a number from 0 to 1", lambda v: 0 <= v <= 1)


def open_ratio(text: str) -> float:
    """A share strictly between 0 and 1 (a held-out fraction)."""
    return _checked(text, "a number between 0 and 1 (both excluded)", lambda v: 0 < v < 1)


def beta(text: str) -> float:
    """An Adam moment decay: 0 included, 1 excluded (1 never forgets, and divides by 0)."""
    return _checked(text, "a number from 0 up to (not including) 1", lambda v: 0 <= v < 1)


def positive_int(text: str) -> int:
    return _checked(text, f"a whole number from 1 to {MAX_COUNT:,}",
                    lambda v: 1 <= v <= MAX_COUNT, whole=True)


def non_negative_int(text: str) -> int:
    return _checked(text, f"a whole number from 0 to {MAX_COUNT:,}",
                    lambda v: 0 <= v <= MAX_COUNT, whole=True)


def any_int(text: str) -> int:
    """A whole number that may be negative (a position counted from the end)."""
    return _checked(text, f"a whole number from -{MAX_COUNT:,} to {MAX_COUNT:,}",
                    lambda v: abs(v) <= MAX_COUNT, whole=True)


def seed(text: str) -> int:
    return _checked(text, "a whole number from 0 to 2^64-1", lambda v: 0 <= v <= MAX_SEED,
                    whole=True)


def run_seed(text: str) -> int:
    """A training run's seed, small enough that every step's derived seed fits torch's range."""
    return _checked(text, f"a whole number from 0 to {MAX_RUN_SEED:,}",
                    lambda v: 0 <= v <= MAX_RUN_SEED, whole=True)


def learning_rate(text: str) -> float:
    return _checked(text, f"a number from {TINY:g} to {MAX_LR:g}", lambda v: TINY <= v <= MAX_LR)


def run_seeds(text: str) -> str:
    """Comma-separated run seeds (the text, unchanged: the commands read the list)."""
    try:
        for part in text.split(","):
            if part.strip():
                run_seed(part.strip())
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"takes comma-separated whole numbers from 0 to {MAX_RUN_SEED:,} such as 1,2,3; "
            f"got '{text}'") from None
    return text


def path(text: str) -> str:
    """A file or folder name: an empty one would silently mean the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("takes a path; got an empty one")
    return text


def optional_path(text: str) -> str:
    """A path that may be left empty ('' is the setting's "none")."""
    return text if text == "" else path(text)


def some_text(text: str) -> str:
    """Text to read (a probe, a prompt to compare): blank gives the model nothing."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"takes some text; got '{text}'")
    return text


def temperature(text: str) -> float:
    return _checked(text, f"0 (greedy) or a number from {MIN_TEMPERATURE:g} to "
                          f"{MAX_TEMPERATURE:g}",
                    lambda v: v == 0 or MIN_TEMPERATURE <= v <= MAX_TEMPERATURE)


def top_p(text: str) -> float:
    return _checked(text, f"a number from {MIN_TOP_P:g} to 1 (1 keeps every token)",
                    lambda v: MIN_TOP_P <= v <= 1)


DEVICE_NAMES = "auto, cpu, cuda, cuda:N or mps"


def device(text: str) -> str:
    """A device this machine has (the name, unchanged): torch's other names (meta, xla...) and
    a GPU that is not there are refused here, not by an exception halfway through a run."""
    if not re.fullmatch(r"auto|cpu|mps|cuda(:\d{1,4})?", text):
        raise argparse.ArgumentTypeError(f"takes {DEVICE_NAMES}; got '{text}'")
    if text in ("auto", "cpu"):
        return text  # without importing torch: `-h` and the GUI's flags stay fast
    from ..train.device import pick_device
    try:
        picked = pick_device(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    import torch
    if picked.type == "cuda" and (picked.index or 0) >= torch.cuda.device_count():
        raise argparse.ArgumentTypeError(f"this machine has {torch.cuda.device_count()} CUDA "
                                         f"GPU(s), so no '{text}'; use cuda:0 or auto")
    return text


def window_size(text: str) -> tuple[int, int]:
    """``WxH`` in pixels, each side from 1 to the largest window Qt can render offscreen."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes WIDTHxHEIGHT such as 1600x1000; got "
                                         f"'{text}'") from None
    max_w, max_h = MAX_WINDOW
    if not (1 <= width <= max_w and 1 <= height <= max_h):
        raise argparse.ArgumentTypeError(f"takes a width from 1 to {max_w} and a height from 1 "
                                         f"to {max_h} pixels; got '{text}'")
    return width, height
