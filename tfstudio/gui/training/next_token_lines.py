"""What the next-token view writes, without Qt: its sliders' values (:func:`setting_labels`), the
line under the chart (:func:`summary_line`), the chart's top (:func:`chart_top`) and each
candidate's label under its bar (:func:`tick_label`), the prompt it asks about for a task
(:func:`answer_prompt`), and its bars: the outlined, filled and hatched ones (:func:`bars`) and
what sampling can draw (:func:`drawable`)."""
from __future__ import annotations

import numpy as np

from .token_text import display_token

NO_PREDICTION = "No prediction yet: train a model or open a past run."


def from_sliders(temperature: int, top_k: int, top_p: int) -> tuple[float, int, float]:
    """(temperature, top-k, top-p) from the sliders, which count temperature and top-p in
    hundredths."""
    return temperature / 100.0, top_k, top_p / 100.0


def to_sliders(temperature: float | None, top_k: int | None, top_p: float | None
               ) -> tuple[int | None, int | None, int | None]:
    """The sliders' positions for these settings (None: that slider stays)."""
    return (None if temperature is None else round(temperature * 100), top_k,
            None if top_p is None else round(top_p * 100))


def chart_x_range(candidates: int) -> tuple[float, float]:
    """The chart's x range: each candidate's bar whole, one bar's room when there are none."""
    return -0.6, max(candidates, 1) - 0.4


def setting_labels(temperature: float, top_k: int, top_p: float) -> tuple[str, str, str]:
    """The values beside the sliders: a temperature of 0 is greedy; top-k 0 and top-p 1 are
    off."""
    return (f"{temperature:.2f}" + (" (greedy)" if temperature == 0 else ""),
            f"{top_k}" if top_k else "off", f"{top_p:.2f}" if top_p < 1 else "off")


def summary_line(kept: int, vocab: int, entropy: float) -> str:
    """How many of the ``vocab`` tokens sampling can draw, how spread out, and the legend."""
    return (f"{kept} of {vocab} tokens can be drawn · entropy {entropy:.2f} nats · outlined: "
            "after temperature only · filled: what sampling draws from · hatched: filtered out")


def chart_top(heights: list[float]) -> float:
    """The chart's top: 0.1, 0.2, 0.5 or 1, the first with a tenth of room above the tallest
    bar (each look's new bars move it only across those steps; no bars: 1)."""
    if not heights:
        return 1.0
    top = max(0.05, *heights)
    return next((end for end in (0.1, 0.2, 0.5) if end >= top * 1.1), 1.0)


def tick_label(text: str, width: int = 4) -> str:
    """A candidate as a label that fits under its bar: a special token as ⟨its name⟩, cut to
    three letters past ``width`` (<|mask|> -> ⟨mask⟩, <|endoftext|> -> ⟨end⟩), anything else
    longer than ``width`` cut with an ellipsis."""
    if text.startswith("<|") and text.endswith("|>") and len(text) > 4:
        name = text[2:-2]
        return "⟨" + (name if len(name) <= width else name[:3]) + "⟩"
    label = display_token(text)
    return label if len(label) <= width else label[:width - 1] + "…"


def answer_prompt(text: str, sep: str | None) -> str:
    """For a synthetic task (its separator ``sep``), the probe text up to and with its first
    separator ("abc>"): the next token is then the first answer token. Else the text."""
    if not sep or sep not in text:
        return text
    return text[:text.index(sep) + len(sep)]


def live_source(where: str) -> str:
    """The line above a live look's chart: while a run trains the prompt is its probe text."""
    return (f"What comes after the probe text, {where} (during training the prompt is the "
            "probe text; Enter sets it)")


def prompt_for_loaded_weights(prompt: str, probe: str) -> str | None:
    """The prompt the box gets when weights load: None keeps ``prompt``, the user's own; an
    empty box or one still holding the look's probe text gets the probe text back (to be cut
    to the task's answer, ``answer_prompt``)."""
    return probe if not prompt or prompt == probe else None


def takes_prompt(shown: str, text: str, typing: bool) -> bool:
    """Whether the prompt box is set to ``text`` (a look's or loaded weights' prompt): only
    when it shows something else and never while the user types in it."""
    return shown != text and not typing


ENCODER_NO_GENERATION = ("A masked-LM encoder predicts masked tokens; it does not write left to "
                         "right. The chart shows its guess for the last position.")


def generation_offer(family: str) -> tuple[bool, str]:
    """(whether Generate is offered, why not) for a model of ``family``: every family writes
    left to right but a masked-LM encoder."""
    return (False, ENCODER_NO_GENERATION) if family == "encoder" else (True, "")


def bars(candidates) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{kind: (x, heights)} of the chart's bars, one slot per candidate: "outlined" each one's
    probability after temperature only; "filled" what sampling draws from (its final
    probability), for those no filter took out; "hatched" those a filter took out, at the
    height temperature gave them."""
    x = np.arange(len(candidates), dtype=float)
    tempered = np.array([c.prob_tempered for c in candidates], dtype=float)
    final = np.array([c.prob_final for c in candidates], dtype=float)
    filtered = np.array([c.filtered_by != "" for c in candidates], dtype=bool)
    return {"outlined": (x, tempered), "filled": (x[~filtered], final[~filtered]),
            "hatched": (x[filtered], tempered[filtered])}


def drawable(candidates) -> list[tuple[str, float]]:
    """(token, probability) of the filled bars, left to right: what sampling can draw."""
    return [(c.text, c.prob_final) for c in candidates if c.prob_final > 0]


def prompt_html(prompt: str, muted: str) -> str:
    """The prompt at the head of the generated text, in the ``muted`` colour, its markup and
    line breaks kept as typed."""
    escaped = (prompt.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
               .replace("\n", "<br>"))
    return f"<span style='color:{muted}'>{escaped}</span>"
