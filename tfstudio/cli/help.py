"""How ``-h`` reads: every option's sentence followed by its choices and its default, and
numbers printed for people."""
from __future__ import annotations

import argparse


class HelpFormatter(argparse.HelpFormatter):
    """Appends ``(choices: a, b)`` and ``(default: x)`` to an option's help unless it already
    says them; flags (default off) and options whose help explains their default in words get
    no number appended."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.help is argparse.SUPPRESS or not action.option_strings:
            return text
        if action.choices and not all(str(c) in text for c in action.choices):
            text += " (choices: %(choices)s)"
        default = action.default
        if "default" not in text and not (default is None or default is False
                                          or default is argparse.SUPPRESS):
            text += " (default: %(default)s)"
        return text


def number(value: float | None, digits: int = 4) -> str:
    """``value`` with ``digits`` significant digits (1.1178264617919922 -> 1.118), 'n/a' for
    None; large counts keep their thousands separators."""
    if value is None:
        return "n/a"
    if abs(value) >= 10 ** digits:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"
