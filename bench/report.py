"""Writes one benchmark's section of docs/BENCHMARKS.md, leaving the other sections alone."""
from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import torch

DOC = Path(__file__).resolve().parent.parent / "docs" / "BENCHMARKS.md"


def replace_section(title: str, body: str) -> Path:
    """Put ``title`` + ``body`` in place of the section headed ``title`` (or append it)."""
    section = f"{title}\n\n{body.strip()}\n"
    text = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    pattern = re.compile(re.escape(title) + r".*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + section
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text)
    return DOC


def step_clock() -> tuple[Callable[[], float], str]:
    """The clock a bench times its steps with, and its name for the page. With one torch thread
    it is the process's CPU time, so time spent waiting while other processes ran on a shared
    machine is not counted as step time; with more threads, wall time (CPU time would add up
    the threads' work)."""
    if torch.get_num_threads() == 1:
        return time.process_time, "the process's CPU time"
    return time.perf_counter, "wall time"
