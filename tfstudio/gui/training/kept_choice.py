"""What a picker (a combo box) shows after it is filled again, without Qt: the entry it showed
while that is still offered, else the first. The attention view's Layer and Heads boxes, the
positions view's Scheme box and the experts view's MoE layer box follow it."""
from __future__ import annotations


def kept_choice(current, choices: list):
    """``current`` when ``choices`` still holds it, else the first choice (None: no choices)."""
    return current if current in choices else (choices[0] if choices else None)
