"""Writes one benchmark's section of docs/BENCHMARKS.md, leaving the other sections alone."""
from __future__ import annotations

import re
from pathlib import Path

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
