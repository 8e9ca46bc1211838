"""GPT-2's byte <-> printable character table, written out as in openai/gpt-2's encoder.py: the
independent reference the tokenizer tests read GPT-2's vocabulary files with."""
from __future__ import annotations


def gpt2_bytes_to_unicode() -> dict[int, str]:
    """Each byte's printable stand-in, in GPT-2's id order."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
          + list(range(ord("®"), ord("ÿ") + 1)))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))
