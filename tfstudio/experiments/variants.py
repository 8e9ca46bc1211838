"""From ``--vary KEY=v1,v2`` to graphs: each variant is the base graph with one setting per key,
made by the same edit operations as the editor's switches (``tfstudio.graph.switches`` and
``tfstudio.graph.placement``), so a variant differs from the base in exactly what its key names.

KEY is a switch (attention, norm, positions, ffn, activation) or a parameter path
``GROUP.NODE.PARAM`` (``layers.attn.heads``), whose node is found under the groups named.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from ..graph import Document, Graph, Node
from ..graph import block_types as bt
from ..graph.edit_rules import heads_edit
from ..graph.kinds import DENSE_FFN, GQA, MOE_FFN, PLACEMENTS
from ..graph.placement import residual_structure, rewrite_placement
from ..graph.schema import get_spec
from ..graph.switches import (ATTENTION_KINDS, POSITIONAL_SCHEMES, attention_kind_of,
                              set_attention_kind, set_ffn_kind,
                              set_positional_scheme)

FFN_CHOICES = {"dense": DENSE_FFN, "moe": MOE_FFN}  # the names -> the switch's
SWITCHES = {
    "attention": ATTENTION_KINDS,
    "norm": PLACEMENTS,
    "positions": POSITIONAL_SCHEMES,
    "ffn": tuple(FFN_CHOICES),
    "activation": get_spec(bt.FEED_FORWARD).param("activation").choices,
}


class VariantError(ValueError):
    """A --vary that cannot be built; the message names the problem and the fix."""


@dataclass(frozen=True)
class Variant:
    settings: tuple[tuple[str, str], ...]   # (key, value) per --vary, in the given order
    graph: Graph

    @property
    def name(self) -> str:
        """"attention=gqa, norm=post" (a table row, a legend entry)."""
        return ", ".join(f"{k}={v}" for k, v in self.settings) or "base"

    @property
    def slug(self) -> str:
        """The variant's folder name: "attention-gqa_norm-post"."""
        text = "_".join(f"{k}-{v}" for k, v in self.settings) or "base"
        return re.sub(r"[^A-Za-z0-9._-]+", "-", text)


def parse_vary(text: str) -> tuple[str, list[str]]:
    """"KEY=v1,v2" -> ("KEY", ["v1", "v2"])."""
    key, sep, values = text.partition("=")
    choices = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not key.strip() or not choices:
        raise VariantError(f"--vary {text!r} is not KEY=v1,v2; write e.g. --vary attention=mha,gqa")
    if len(set(choices)) != len(choices):
        raise VariantError(f"--vary {text!r} names a value twice; list each value once")
    return key.strip(), choices


def expand(base: Graph, varies: list[tuple[str, list[str]]]) -> list[Variant]:
    """Every combination of the varied values (the cartesian product), each built from
    ``base``; keys must differ."""
    keys = [k for k, _ in varies]
    if len(set(keys)) != len(keys):
        raise VariantError(f"--vary names {keys} with a repeat; give each key once with all "
                           "its values (KEY=v1,v2,v3)")
    variants = []
    for combo in itertools.product(*[[(k, v) for v in values] for k, values in varies]):
        graph = base
        for key, value in combo:
            graph = apply_setting(graph, key, value)
        variants.append(Variant(tuple(combo), graph))
    return variants


# settings a lesson defines for itself: KEY -> edit(graph, value) -> a new graph
LESSON_SETTINGS: dict = {}


def apply_setting(graph: Graph, key: str, value: str) -> Graph:
    """``graph`` with one setting changed (a new graph; ``graph`` is untouched)."""
    if key in LESSON_SETTINGS:
        return LESSON_SETTINGS[key](graph, value)
    if key in SWITCHES:
        if value not in SWITCHES[key]:
            raise VariantError(f"{key}={value} is not a choice; {key} takes "
                               f"{', '.join(SWITCHES[key])}")
        return _SWITCH_EDITS[key](graph, value)
    if "." in key:
        return set_parameter(graph, key, value)
    raise VariantError(f"unknown --vary key '{key}'; use one of {', '.join(SWITCHES)} or a "
                       "parameter path such as layers.attn.heads")


def _layers(graph: Graph, edit) -> Graph:
    """``edit`` applied to the inside of every group that holds a residual layer, as the
    editor's layer switches are (the editor switches one layer; a variant switches them all)."""
    out = graph.clone()
    found = _rewrite_groups(out, edit)
    if not found:
        raise VariantError("this graph has no layer group (a group with residual sublayers) to "
                           "switch; build the model from layer groups, or vary a parameter path")
    return out


def _rewrite_groups(graph: Graph, edit) -> int:
    count = 0
    for node in graph:
        if node.subgraph is None:
            continue
        structure = residual_structure(node.subgraph)
        if structure is not None and structure.sublayers:
            node.subgraph = edit(node.subgraph)
            count += 1
        else:
            count += _rewrite_groups(node.subgraph, edit)
    return count


def _attention(graph: Graph, kind: str) -> Graph:
    if not _nodes(graph, bt.ATTENTION, bt.CROSS_ATTENTION):
        raise VariantError("attention=... needs attention blocks; this graph has none")
    return _layers(graph, lambda layer: set_attention_kind(layer, kind))


def _norm(graph: Graph, placement: str) -> Graph:
    return _layers(graph, lambda layer: rewrite_placement(layer, placement))


def _ffn(graph: Graph, kind: str) -> Graph:
    if not _nodes(graph, *bt.FFN_TYPES):
        raise VariantError("ffn=... needs feed-forward blocks; this graph has none")
    return _layers(graph, lambda layer: set_ffn_kind(layer, FFN_CHOICES[kind]))


def _activation(graph: Graph, name: str) -> Graph:
    """Every FFN (dense or expert) with ``name`` as its activation, nothing else changed."""
    out = graph.clone()
    blocks = _nodes(out, *bt.FFN_TYPES)
    if not blocks:
        raise VariantError("activation=... needs feed-forward blocks; this graph has none")
    for node in blocks:
        node.params["activation"] = name
    return out


_SWITCH_EDITS = {"attention": _attention, "norm": _norm, "positions": set_positional_scheme,
                 "ffn": _ffn, "activation": _activation}


def _nodes(graph: Graph, *types: str) -> list[Node]:
    return [node for _, node in graph.walk() if node.type in types]


def set_parameter(graph: Graph, path: str, text: str) -> Graph:
    """``graph`` with the parameter at ``GROUP...NODE.PARAM`` set to ``text`` (coerced to the
    parameter's type). Setting an attention block's ``heads`` keeps its kind: an MHA block
    stays MHA (kv_heads follows), an MQA block keeps one K/V head, a GQA block keeps its
    group size (query heads per K/V head); heads that the group size does not divide are
    refused."""
    *node_path, param = path.split(".")
    out = graph.clone()
    where = out
    for i, part in enumerate(node_path):
        if part not in where:
            raise VariantError(f"--vary {path}: no node '{part}' in "
                               f"{'.'.join(node_path[:i]) or 'the top level'} (it has "
                               f"{', '.join(n.id for n in where)})")
        node = where.node(part)
        if i < len(node_path) - 1:
            if node.subgraph is None:
                raise VariantError(f"--vary {path}: '{part}' is a block, not a group")
            where = node.subgraph
    if not node_path:
        raise VariantError(f"--vary {path}: write NODE.PARAM or GROUP.NODE.PARAM")
    spec = get_spec(node.type)
    names = [p.name for p in spec.params] + (["repeat"] if node.subgraph is not None else [])
    if param not in names:
        raise VariantError(f"--vary {path}: a {node.type} block has no parameter '{param}'; it "
                           f"has {', '.join(names)}")
    if param == "repeat":
        value = _whole(text, path)
    else:
        try:
            value = spec.param(param).coerce(text)
        except (TypeError, ValueError) as exc:
            raise VariantError(f"--vary {path}={text}: {exc}") from None
    if param == "heads" and node.type in (bt.ATTENTION, bt.CROSS_ATTENTION):
        _refuse_a_new_grouping(node, int(value), path)
        # the editor's own rule (the inspector and the command line ask it too)
        Document(out).execute(heads_edit(where, tuple(node_path[:-1]), node.id, int(value)).edit)
        return out
    node.params[param] = value
    return out


def _whole(text: str, path: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise VariantError(f"--vary {path}={text}: repeat takes whole numbers") from None
    if value < 1:
        raise VariantError(f"--vary {path}={text}: repeat must be at least 1")
    return value


def _refuse_a_new_grouping(node: Node, heads: int, path: str) -> None:
    """The rule (``edit_rules.heads_edit``) keeps the block's kind where it can; a GQA block
    keeps its group size. Where it would have to regroup (or make GQA into MQA) a variant is
    refused rather than changed, so it differs from its base in the one setting asked for."""
    attn = node.typed_params()
    old_heads, kv = int(attn.heads), int(attn.kv_heads)
    if attention_kind_of(old_heads, kv) != GQA:
        return
    group = old_heads // kv
    if heads % group:
        raise VariantError(f"--vary {path}={heads}: this GQA block shares each K/V head among "
                           f"{group} query heads, and {heads} is not a multiple of {group}; "
                           f"choose heads that are")
    if heads // group < 2:
        raise VariantError(f"--vary {path}={heads}: this GQA block shares each K/V head among "
                           f"{group} query heads, so {heads} heads would leave one K/V head "
                           f"(MQA); vary attention=mqa for that, or choose more heads")
