"""What the run setup says and offers, without Qt: the line under the probe text's preview
(:func:`preview_line`) and the preview itself (:func:`token_preview_html`): how the tokenizer
cuts the text, how much of it the looks inside read,
whose text it is, and which characters it does not know; the line while a tokenizer is built;
which corpus entry a run's corpus picks (:func:`corpus_entry`); the devices it offers
(:func:`devices`)."""
from __future__ import annotations

import html
import sys
from pathlib import Path

from ...probes.inputs import DEFAULT_MAX_TOKENS
from .history import corpus_name
from .palette import series_rgb
from .token_text import display_token


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


def building_line(spec: str, corpus: str) -> str:
    return f"Building the {spec} tokenizer on {corpus}…"


def corpus_entry(spec: str, offered: list[str]) -> tuple[str, str | None]:
    """(the corpus entry to pick for ``spec``, the label of an entry to add for it first; None:
    it is ``offered``): one entry per corpus ("sample" is the medium stories, listed as
    ``history.corpus_name`` says), and a file or folder of the user's own under its name."""
    if spec in offered:
        return spec, None
    if spec.startswith("sample") and corpus_name(spec) in offered:
        return corpus_name(spec), None
    return spec, Path(spec).name or spec


def devices() -> list[str]:
    """auto and cpu always; cuda / mps when torch is loaded and sees them (never imports torch:
    the editor starts without it)."""
    offered = ["auto", "cpu"]
    torch = sys.modules.get("torch")
    if torch is not None:
        if torch.cuda.is_available():
            offered += ["cuda"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())]
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            offered.append("mps")
    return offered


def has_gpu(offered: list[str]) -> bool:
    """Whether a device other than the CPU is offered (the suggested setup trains longer)."""
    return any(d not in ("cpu", "auto") for d in offered)


def token_preview_html(strings: list[str], ids: list[int], muted: str) -> str:
    """Each token on its own tinted background (the series colours in turn) with its id
    underneath in the ``muted`` colour, as tokenizer demos do."""
    cells = []
    for i, (text, token_id) in enumerate(zip(strings, ids)):
        red, green, blue = series_rgb(i)
        cells.append(
            f"<span style='background-color:rgba({red},{green},{blue},0.28);'>"
            "<span style='font-family:monospace;font-size:12pt;'>"
            f"{html.escape(display_token(text))}</span>"
            f"<sub style='color:{muted};'>{token_id}"
            "</sub></span>")
    return "&#8203;".join(cells)
