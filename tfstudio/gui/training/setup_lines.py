"""What the run setup says about its tokenizer, without Qt: the line under the probe text's
preview (:func:`preview_line`): how the tokenizer cuts the text, how much of it the looks inside
read, whose text it is, and which characters it does not know."""
from __future__ import annotations

import html

from ...probes.inputs import DEFAULT_MAX_TOKENS


def preview_line(tokenizer, text: str, ids: list[int], default: bool) -> str:
    """The preview's line for ``text`` cut into ``ids`` by ``tokenizer`` (``default``: the
    corpus's default probe text, the user left the box empty); rich text."""
    ratio = len(text) / max(1, len(ids))
    info = (f"{tokenizer.name}: {tokenizer.vocab_size:,} ids · {len(ids)} tokens for "
            f"{len(text)} characters ({ratio:.1f} per token)")
    if len(ids) > DEFAULT_MAX_TOKENS:
        info += f" · the looks inside read its first {DEFAULT_MAX_TOKENS}"
    if default:
        info += " · the default probe text for this corpus"
    unknown = unknown_characters(tokenizer, text, ids)
    if unknown:
        shown = "".join(sorted(set(unknown)))[:24]
        info += (f" · <span style='color:#c2410c'>{len(unknown)} character"
                 f"{'s' * (len(unknown) != 1)} not in its vocabulary ("
                 f"{html.escape(shown)}) read as the unknown token \ufffd</span>")
    return info


def unknown_characters(tokenizer, text: str, ids: list[int]) -> str:
    """The characters of ``text`` a character tokenizer maps to its unknown token."""
    from ...data.tokenizer import UNK
    unk = getattr(tokenizer, "specials", {}).get(UNK)
    if unk is None or unk not in ids or len(ids) != len(text):
        return ""
    return "".join(ch for ch, i in zip(text, ids) if i == unk)
