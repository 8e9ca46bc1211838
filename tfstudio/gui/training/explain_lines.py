"""The sentences the Explain view writes, computed from its numbers, without Qt: the picked
token's line under a stage (:func:`picked_text`, :func:`picked_line`), whose weights it shows
(:func:`source_caption`), which tokens an ablation's loss is scored on (:func:`chosen_span`) and
what switching blocks off changed (:func:`effect_text`), how token vectors sit against
position vectors (:func:`orthogonality_text`), each cell of the logit lens
(:func:`lens_cell`; its shade: explain_colours.lens_rgb), and what the Token, Layer and Head
pickers offer (:func:`token_choices`, :func:`attention_choices`)."""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ...probes.ablation import answer_span
from .token_text import display_token, probability

NUMBERS_SHOWN = 8   # the picked token's first values written out in the line under the formula
LIKELIEST_SHOWN = 5  # the likeliest next tokens that line names
SEPARATOR = ">"   # the answer follows the last one (the tasks' and probe texts' separator)


def picked_text(summary: dict, tokens: list[str], position: int, names: list[str]) -> str:
    """The picked token's line from a stage's summary (the picture shows every value; hover
    for any): its ``picked`` row, or the likeliest tokens (``names``, likeliest first)."""
    if summary["kind"] == "sampling" and "top_ids" in summary:
        return likeliest_line(names, summary["top_values"])
    if "picked" not in summary or not 0 <= position < len(tokens):
        return ""
    one_each = len(summary["shape"]) == 1 and summary["shape"][0] == len(tokens)
    return at_line(tokens[position], position, summary["picked"], one_each)


def picked_line(value: np.ndarray, kind: str, row_labels: list[str], position: int | None,
                token_names: Callable[[list[int]], list[str]] | None = None) -> str:
    """The picked token's line from a whole step's tensor (the heatmap shows every position;
    hover a cell for any other value): its row, or the likeliest tokens."""
    if position is None or not 0 <= position < len(row_labels):
        return ""
    if kind == "sampling" and value.ndim == 1 and token_names is not None:
        top = [int(i) for i in np.argsort(-value, kind="stable")[:LIKELIEST_SHOWN]
               if value[i] > 0]
        return likeliest_line(token_names(top), value[top])
    if value.ndim == 1 and value.shape[0] == len(row_labels):
        return at_line(row_labels[position], position, value[position], one_each=True)
    if value.ndim < 2 or value.shape[0] != len(row_labels):
        return ""
    return at_line(row_labels[position], position, value[position], one_each=False)


# the one formatter of both shapes' sentences
def likeliest_line(names: list[str], probabilities) -> str:
    """"likeliest next: a 0.62 · b 0.3": the first tokens (given likeliest first) that have
    any probability."""
    top = [(n, p) for n, p in zip(names, probabilities) if p > 0][:LIKELIEST_SHOWN]
    return "likeliest next: " + " · ".join(f"{display_token(n)} {probability(p)}"
                                           for n, p in top)


def at_line(token: str, position: int, values, one_each: bool) -> str:
    """"at b (position 1): 2.5, 2.75, …": the picked token's one value (``one_each``: a
    number per token, 4 digits) or its row's first NUMBERS_SHOWN (3 digits)."""
    row = np.asarray(values, dtype=np.float64).reshape(-1)
    said = f"at {display_token(token)} (position {position}): "
    if one_each:
        return said + f"{row[0]:.4g}"
    more = f", … ({row.size} values)" if row.size > NUMBERS_SHOWN else ""
    return said + ", ".join(f"{v:.3g}" for v in row[:NUMBERS_SHOWN]) + more


def source_caption(run: str, step: int | None, training: bool = False) -> str:
    """Whose weights Explain shows: the run (as Runs names it) and the step they are of;
    ``training``: a look a running training took, not weights loaded in the app."""
    if training:
        return f"{run or 'The run training'} · step {step:,}, its latest look while it trains"
    if step is None:
        return (f"{run} · weights of an unknown step" if run else
                "Weights not from a run (fresh, or loaded by hand)")
    return f"{run or 'Weights not from a run'} · the weights of step {step:,}"


def span_label(tokens: list[str], span: tuple[int, int], what: str) -> str:
    """'the answer tokens (positions 9-16: "hgfedcba")': which tokens a loss was scored on."""
    shown = "".join(display_token(t) for t in tokens[span[0]:span[1]])
    return f"{what} (positions {span[0]}-{span[1] - 1}: “{shown}”)"


def chosen_span(kind: str, tokens: list[str], start: int, end: int
                ) -> tuple[tuple[int, int] | None, str, str]:
    """(span, its label, a note when the choice cannot be scored on this text)."""
    if kind == "answer":
        span = answer_span(tokens, SEPARATOR)
        if span is None:
            return None, "", (f"This text has no answer after a “{SEPARATOR}”: only the loss "
                              "on the whole text is shown. Choose positions to score a span.")
        return span, span_label(tokens, span, "the answer tokens"), ""
    if kind == "range":
        if not 1 <= start <= end < len(tokens):
            return None, "", (f"Positions {start} to {end} are not a span of this text "
                              f"(1 to {len(tokens) - 1}: position 0 has nothing to predict "
                              "it from).")
        return (start, end + 1), span_label(tokens, (start, end + 1), "your span"), ""
    return None, "", ""


def span_positions(length: int) -> tuple[int, int]:
    """The positions a span of a ``length``-token text can score: 1 to the last (position 0
    has no context to predict it from)."""
    return 1, max(1, length - 1)


def rescored(ablations: list[str]) -> bool:
    """Whether a new span is scored again: only with a block switched off (with every block
    on, the span changes nothing)."""
    return bool(ablations)


def effect_text(effect, note: str = "") -> str:
    """The report: what was switched off and each loss, labelled with its tokens."""
    if effect is None:
        return "Nothing is switched off." + (f"\n{note}" if note else "")

    def top(tops) -> str:
        return ", ".join(f"{display_token(t)} {probability(p)}" for t, p in tops)

    lines = [f"Switched off: {', '.join(effect.targets)}.",
             f"Loss on the whole text {effect.loss_before:.4f} → {effect.loss_after:.4f}."]
    if effect.span is not None:
        lines.append(f"Loss on {effect.span_label} {effect.span_loss_before:.4f} → "
                     f"{effect.span_loss_after:.4f}.")
    elif note:
        lines.append(note)
    lines += [f"KL at position {effect.position}: {effect.kl:.4f} nats.",
              f"Before: {top(effect.top_before)}", f"After: {top(effect.top_after)}"]
    return "\n".join(lines)


def orthogonality_text(angles: dict | None) -> str:
    """The Embeddings tab's sentence on token and position vectors, computed from ``angles``."""
    from ...probes.embeddings import alignment_words

    if angles is None:
        return ("Token and position vectors: this model adds no position vectors to the "
                "stream (RoPE, ALiBi or none), so there is no angle between them to measure.")
    return (f"Token vectors against the {angles['scheme']} position vectors (the loaded "
            f"weights, {angles['cosine'].shape[1]} positions): {alignment_words(angles)}.")


class LensCell(NamedTuple):
    text: str      # the likeliest token there and its probability
    p: float       # that probability, which shades the cell
    answer: bool   # already the model's answer at that position (its last layer's token)
    tooltip: str   # the top tokens with their probabilities

    @property
    def white_text(self) -> bool:
        """Its text in white: on a cell shaded dark (surer than 0.6), the theme's ink would
        not read."""
        return self.p > 0.6


def lens_cell(lens, layer: int, position: int) -> LensCell:
    """The logit lens's cell for ``layer`` at ``position`` (a ``probes.logit_lens`` result)."""
    top, p = lens.top_tokens[layer][position], float(lens.top_probs[layer, position, 0])
    answer = int(lens.top_ids[layer, position, 0]) == int(lens.top_ids[-1, position, 0])
    tooltip = "\n".join(f"{display_token(t)}  {q:.3f}"
                        for t, q in zip(top, lens.top_probs[layer, position]))
    return LensCell(f"{display_token(top[0])} {p:.2f}", p, answer,
                    tooltip + ("\n(the model's answer here)" if answer else ""))


def replay_hint(steps: list[int]) -> str:
    """What the embeddings' replay offers, for a run that kept checkpoints at ``steps``."""
    if not steps:
        return "This run kept no checkpoint to replay."
    if len(steps) == 1:
        return (f"The run kept one checkpoint (step {steps[0]:,}): train with "
                "`tfstudio train ... --checkpoint-every N --keep-checkpoints K` to "
                "replay the map over training.")
    return (f"{len(steps)} checkpoints: drag the slider to watch the embeddings "
            "learn; the axes are the latest step's, each step's map rotated onto them.")


def replay_index(steps: list[int], step: int) -> int:
    """The replay's map for training step ``step``: the newest kept at or before it (the
    first when none is)."""
    earlier = [i for i, s in enumerate(steps) if s <= step]
    return earlier[-1] if earlier else 0


def embedding_note(rows: int, step: int | None, explained, picked: str = "",
                   nearest: list[tuple[str, float]] | None = None) -> str:
    """The sentence under the embeddings map: what the PCA shows and keeps, and, for a picked
    token of its own, its nearest tokens by cosine."""
    where = "the loaded weights" if step is None else f"step {step:,}"
    note = (f"PCA of {rows} rows of the token embedding table at {where}: the axes "
            f"keep {explained[0]:.0%} and {explained[1]:.0%} of their "
            "variance. Tokens used alike during training end up close.")
    if nearest is None:
        return note
    near = ", ".join(f"{display_token(name)} ({c:.2f})" for name, c in nearest)
    shown = display_token(picked)
    return note + (f" Nearest to {shown} by cosine: {near} ({shown} is the larger point; "
                   "pick another Token above to follow it).")


def stage_line(stage: int, stages: int, name: str) -> str:
    """Where the walk through the forward pass stands: "Stage 3 of 12: layers.0.attn: scores"."""
    return f"Stage {stage + 1} of {stages}: {name}"


def walk_buttons(stage: int, stages: int) -> tuple[bool, bool]:
    """(Previous, Next) enabled: none before the first stage or past the last."""
    return stage > 0, stage < stages - 1


def layers_title(name: str, layers: int) -> str:
    """The row of one stage in every layer: "“scores” in each of the 4 layers, side by side…"
    (``name``: the stage's, its block named before ": ")."""
    step = name.split(": ", 1)[-1]
    return f"“{step}” in each of the {layers} layers, side by side (the one explained framed):"


def token_choices(tokens: list[str]) -> list[tuple[str, int]]:
    """The Token picker's entries: each position and its token, made visible ("3: ␣")."""
    return [(f"{i}: {display_token(token)}", i) for i, token in enumerate(tokens)]


def attention_choices(modules) -> tuple[int, list[tuple[str, int | None]]]:
    """(the highest head every attention block has, the Layer picker's entries) of a model's
    ``attention_modules()``: "every layer", then each layer index its blocks' keys hold."""
    heads = [module.heads for _, module in modules]
    layers = sorted({k for key, _ in modules for k in key if isinstance(k, int)})
    return (max(0, min(heads) - 1) if heads else 0,
            [("every layer", None)] + [(f"layer {index}", index) for index in layers])
