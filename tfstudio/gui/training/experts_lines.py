"""What the experts view says and shows, without Qt: before a run, whether the graph on the
canvas has mixture-of-experts blocks and how many (:func:`before_training`); after, the MoE
layers it offers (:func:`expert_layers`), how many experts a layer has (:func:`expert_count`),
the balanced share (:func:`balanced_share`), the tokens its routing read
(:func:`routed_tokens`), each token's first choice (:func:`first_choices`) coloured by its
expert (:func:`coloured_tokens_html`) and the line counting them (:func:`first_choices_line`)."""
from __future__ import annotations

import html

import numpy as np

from ...graph import block_types as bt
from .palette import series_rgb
from .token_text import display_token

NO_MOE = ("This graph has no mixture-of-experts block. Try the tiny-mixtral preset to see a "
          "router at work.")
MOE_BEFORE_TRAINING = ("This graph has {n} mixture-of-experts block{s}. Press Train: the share "
                       "of tokens each expert receives, and the expert each probe token goes "
                       "to, appear here as the router learns.")


def moe_blocks(graph) -> int:
    """How many MoE blocks the graph holds (inside groups too, one per group copy)."""
    count = 0
    for node in graph:
        if node.is_group:
            count += moe_blocks(node.subgraph) * max(1, int(node.typed_params().repeat or 1))
        elif node.type == bt.MOE:
            count += 1
    return count


def before_training(graph) -> str:
    """The experts view's hint before any run: the graph's MoE blocks, or that it has none."""
    n = moe_blocks(graph)
    return MOE_BEFORE_TRAINING.format(n=n, s="s" * (n != 1)) if n else NO_MOE


def expert_layers(look_layers, logged_layers) -> list[str]:
    """The MoE layers offered: the look's (in its order), then any only the curves logged."""
    names = list(look_layers)
    names += [name for name in logged_layers if name not in names]
    return names


def expert_count(loads, routing: dict | None) -> int:
    """A layer's experts: the columns of its logged loads, else its look's routing."""
    if loads.ndim == 2 and loads.size:
        return int(loads.shape[1])
    return int(routing["experts"]) if routing else 0


def balanced_share(last_loads, experts: int) -> float:
    """Each expert's share of the tokens if the router were balanced: the k experts each
    token goes to, spread evenly."""
    return float(sum(last_loads)) / experts if experts else 0.0


def routed_tokens(tokens: dict) -> list[str]:
    """The stream the router's choices are of: the target tokens, else the input tokens,
    else a look's first stream."""
    first = next(iter(tokens.values()), []) if tokens else []
    return list(tokens.get("target", tokens.get("tokens", first)))


def first_choices_line(first: list[int], experts: int, step: int) -> str:
    """"First choices on this text: expert 0: 5, expert 1: 3 (step 40)": every expert, the
    ones no token chose too."""
    counts = [first.count(e) for e in range(max(experts, max(first, default=-1) + 1))]
    return ("First choices on this text: " + ", ".join(
        f"expert {e}: {c}" for e, c in enumerate(counts)) + f" (step {step})")


NO_LOOK_YET = "The coloured probe text appears with the first look inside the model."


def look_caption(first: list[int] | None, experts: int, step: int) -> str:
    """The line under the coloured probe text: how the first choices fall (``first``, each
    token's first-choice expert, from the look at ``step``), or, with no routing looked at
    yet (None), when the colours come."""
    return NO_LOOK_YET if first is None else first_choices_line(first, experts, step)


def first_choices(routing: dict) -> list[int]:
    """Each routed token's first-choice expert (a look's ``assignments``: [tokens, top-k])."""
    return np.asarray(routing["assignments"])[:, 0].tolist()


def coloured_tokens_html(tokens: list[str], experts: list[int]) -> str:
    """Tokens as spans whose background is their expert's colour (dark text stays legible on
    the Tableau palette's light and mid tones)."""
    spans = []
    for token, expert in zip(tokens, experts):
        red, green, blue = series_rgb(int(expert))
        spans.append(f"<span title='expert {expert}' style='background-color:"
                     f"rgba({red},{green},{blue},0.6);"
                     f"color:#1d2230;'>{html.escape(display_token(token))}</span>")
    return "<span style='font-family:monospace;font-size:13pt;'>" + "&#8203;".join(spans) + \
        "</span>"
