"""The words on the inspector's quick-switch buttons and the search's settings (no Qt). What
each switch reads and does lives in ``tfstudio.graph.switches`` (and ``.placement``); this
module names the choices, in the order the buttons appear, finds the settings a query names,
and wraps a setting in the one undoable edit the inspector and the search both make."""
from __future__ import annotations

from dataclasses import dataclass

from ..graph import Graph, ReplaceGraph, graph_at
from ..graph import kinds
from ..graph.switches import (activation_kind, attention_kind, ffn_kind, norm_kind, placement,
                              positional_scheme, set_norm_kind, set_positional_scheme,
                              switch_layer)
from .fuzzy import WHOLE_WORD, WORD_START, fuzzy_score, names_a_word

# value -> button label, in the order the buttons appear
ATTENTION_KINDS = {k: kinds.ATTENTION_KIND_LABELS[k] for k in kinds.ATTENTION_KINDS}
FFN_KINDS = {k: kinds.FFN_KIND_LABELS[k] for k in kinds.FFN_KINDS}
ACTIVATIONS = {k: kinds.ACTIVATION_LABELS[k] for k in kinds.ACTIVATION_FAMILIES}
PLACEMENTS = {k: kinds.PLACEMENT_LABELS[k] for k in kinds.PLACEMENTS}
NORM_KINDS = {k: kinds.NORM_KIND_LABELS[k] for k in kinds.NORM_KINDS}
POSITION_SCHEMES = {k: kinds.POSITIONAL_SCHEME_LABELS[k] for k in kinds.POSITIONAL_SCHEMES}


# what each switch is called in words: the search offers "Set decoder layer's attention to
# GQA" for these (the button's own label is searched too)
SWITCH_TITLES = {"attention": "attention", "ffn": "feed-forward", "activation": "activation",
                 "placement": "norm placement", "position": "positions", "norm": "norm kind"}
LAYER_KEYS = ("attention", "ffn", "activation", "placement")   # a layer group's
MODEL_KEYS = ("position", "norm")                              # the whole model's
SEARCH_WORDS = {
    ("attention", "mha"): "mha multi-head kv", ("attention", "gqa"): "gqa grouped-query kv",
    ("attention", "mqa"): "mqa multi-query kv", ("ffn", "ffn"): "dense ffn mlp",
    ("ffn", "moe"): "moe experts router mixture", ("activation", "silu"): "silu swish",
    ("placement", "pre"): "pre-norm prenorm", ("placement", "post"): "post-norm postnorm",
    ("placement", "sandwich"): "sandwich-norm", ("position", "rope"): "rope rotary",
    ("position", "learned"): "learned absolute", ("position", "none"): "nope",
    ("norm", "rmsnorm"): "rmsnorm rms", ("norm", "layernorm"): "layernorm",
}


def switch_choices(key: str) -> dict[str, str]:
    """The buttons of switch ``key``: value -> label."""
    return {"attention": ATTENTION_KINDS, "ffn": FFN_KINDS, "activation": ACTIVATIONS,
            "placement": PLACEMENTS, "position": POSITION_SCHEMES, "norm": NORM_KINDS}[key]


def setting_words(key: str, value: str) -> str:
    """What a search for switch ``key`` = ``value`` may say."""
    return f"{switch_choices(key)[value]} {value} {SEARCH_WORDS.get((key, value), '')}"


def setting_text(key: str, value: str, layer: str | None) -> str:
    """The search result that sets a switch, naming what it changes."""
    whose = f"{layer}'s" if key in LAYER_KEYS else "the model's"
    return f"Set {whose} {SWITCH_TITLES[key]} to {switch_choices(key)[value]}"


@dataclass(frozen=True)
class SettingHit:
    """A switch setting a search query names: ``exact`` when a word of the query is a whole
    word of the setting ("rope", "gqa", "post-norm"), which ranks it above every block."""

    key: str
    value: str
    text: str
    score: float

    @property
    def exact(self) -> bool:
        return self.score >= WHOLE_WORD


def matching_settings(query: str, layer: str | None) -> list[SettingHit]:
    """The switch settings a word of ``query`` names, best first, each with its result text
    (the search popup's and the palette's one reading); a layer's only when there is a layer
    (named ``layer``) to set."""
    if not query.strip():
        return []
    hits = []
    for key in LAYER_KEYS + MODEL_KEYS:
        if key in LAYER_KEYS and layer is None:
            continue
        for value in switch_choices(key):
            words = setting_words(key, value)
            score = fuzzy_score(query, words)
            if score is not None and score >= WORD_START and names_a_word(query, words):
                hits.append(SettingHit(key, value, setting_text(key, value, layer), score))
    return sorted(hits, key=lambda h: -h.score)


def rewrite(layer: Graph, key: str, choice: str, equal_params: bool = True) -> Graph:
    """The layer with switch ``key`` ("attention", "ffn", "activation", "placement") set to
    ``choice`` (kept for callers of the older name; see graph.switches.switch_layer)."""
    return switch_layer(layer, key, choice, equal_params)


def with_positional_scheme(root: Graph, scheme: str) -> Graph:
    return set_positional_scheme(root, scheme)


NO_LAYER = "Select a layer group first: this setting belongs to a layer"


def setting_edit(root: Graph, key: str, value: str,
                 layer: tuple[tuple[str, ...], str] | None = None,
                 equal_params: bool = True) -> ReplaceGraph:
    """The one undoable edit that sets switch ``key`` to ``value``: the whole model's
    positions or norms, or the inside of the layer group ``layer`` (the path of its level,
    its id). Raises GraphError or ValueError when the graph cannot take the setting (a
    layer's setting with no ``layer`` to set says NO_LAYER)."""
    if key == "position":
        return ReplaceGraph((), set_positional_scheme(root, value),
                            text=f"Switch positions to {value}")
    if key == "norm":
        return ReplaceGraph((), set_norm_kind(root, value), text=f"Switch every norm to {value}")
    if layer is None:
        raise ValueError(NO_LAYER)
    path, group_id = layer
    group = graph_at(root, path).node(group_id)
    return ReplaceGraph(path + (group_id,), switch_layer(group.subgraph, key, value,
                                                         equal_params),
                        text=f"Switch {SWITCH_TITLES[key]} to {value}")


__all__ = ["ATTENTION_KINDS", "FFN_KINDS", "ACTIVATIONS", "PLACEMENTS", "NORM_KINDS",
           "POSITION_SCHEMES", "LAYER_KEYS", "MODEL_KEYS", "switch_choices", "setting_words",
           "setting_text", "SettingHit", "matching_settings", "rewrite", "with_positional_scheme",
           "setting_edit", "NO_LAYER", "attention_kind", "ffn_kind",
           "activation_kind", "norm_kind", "placement", "positional_scheme"]
