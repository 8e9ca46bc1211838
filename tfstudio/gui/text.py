"""How numbers, shapes and sizes read on screen (pure functions, no Qt)."""
from __future__ import annotations

from typing import Iterable


NAME_CHARS = 48  # a user's name in a title, a crumb or a tab: past this it is elided


def short_name(name, limit: int = NAME_CHARS) -> str:
    """A user-supplied name as one line of at most ``limit`` characters: line breaks and tabs
    read as spaces, runs of spaces as one, the middle elided ("a very lo…ng name")."""
    text = " ".join(str(name).split())
    if len(text) <= limit:
        return text
    keep = limit - 1
    return text[: keep - keep // 3] + "…" + text[len(text) - keep // 3:]


def sentence(exc: BaseException) -> str:
    """An exception's words as a sentence for the status bar: a KeyError's without the quotes
    str() adds, the first letter a capital."""
    text = str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)
    return text[:1].upper() + text[1:]


def with_copies(label: str, repeat: int | None) -> str:
    """A layer group's name with its copies: "decoder layer ×6" (one copy: the name alone)."""
    return f"{label} ×{repeat}" if repeat and repeat > 1 else label


def shape_label(shape: Iterable | None) -> str:
    """``("B", "T", 64)`` -> ``"B×T×64"``; an unknown shape -> ``"?"``."""
    if not shape:
        return "?"
    return "×".join(str(d) for d in shape)


def count_label(n: float) -> str:
    """A parameter (or FLOP) count with a metric suffix: 124439808 -> '124.4M'."""
    n = float(n)
    for factor, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= factor:
            return f"{n / factor:.1f}{suffix}"
    return f"{n:.0f}"


def bytes_label(n: float) -> str:
    """Bytes in binary units: 1536 -> '1.5 KiB'."""
    n = float(n)
    for factor, suffix in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if abs(n) >= factor:
            value = n / factor
            return f"{value:.1f} {suffix}" if value < 100 else f"{value:.0f} {suffix}"
    return f"{n:.0f} B"


def param_value_label(value) -> str:
    """A parameter value as the inspector and node summaries show it."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def flops_label(n: float) -> str:
    """FLOPs with a metric prefix: 2.5e9 -> '2.5 GFLOP'."""
    n = float(n)
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= factor:
            value = n / factor
            return (f"{value:.1f}" if value < 100 else f"{value:.0f}") + f" {prefix}FLOP"
    return f"{n:.0f} FLOP"
