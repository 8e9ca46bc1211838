"""Each kind of the architecture has one home in tfstudio/graph/ (kinds.py for attention kind,
norm placement, activation, norm kind and positional scheme; block_types.py for block types),
and the rest of the package names its values through it.

The source test parses every module outside graph/ and blocks/ (the homes and the block
catalogue built on them) and nn/ (torch and the standard library only, so that a standalone
export can copy it; its tables are held equal to the home below) and fails on a raw value of a
kind where a second copy of the axis would start: compared against, gathered in a collection of
that kind (a tuple, list or set whose strings are all values of one axis, or a table keyed by
them), asked of the block registry, or bound to a module constant. Picking one value as an
argument (``placement="post"``) or reading one result (``loss["mha"]``) is a use, not a copy,
and is not flagged.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tfstudio.graph import block_types as bt
from tfstudio.graph import kinds

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "tfstudio"
HOMES = ("graph", "blocks", "nn")

AXES = {
    "block type": {v for k, v in vars(bt).items() if k.isupper() and isinstance(v, str)},
    "attention kind": set(kinds.ATTENTION_KINDS),
    "norm placement": set(kinds.PLACEMENTS),
    "activation": set(kinds.ACTIVATIONS),
    "norm kind": set(kinds.NORM_KINDS),
    # "none" is left out: it says "no such thing" for many settings besides positions
    "positional scheme": set(kinds.POSITIONAL_SCHEMES) - {kinds.NO_POSITIONS},
}
# Values that are ordinary words too ("norm" the statistic, "attention" the view, "post" of a
# request): compared against, one of these counts only when the other side reads that axis.
AMBIGUOUS = {"attention": "block type", "norm": "block type", "add": "block type",
             "dropout": "block type", "moe": "block type", "rnn": "block type",
             "learned": "positional scheme", "pre": "norm placement", "post": "norm placement"}
READS_AXIS = {"block type": "type", "positional scheme": ("scheme", "position"),
              "norm placement": "placement"}
# calls whose argument is a block type
REGISTRY_CALLS = {"get_spec", "nodes_of_type", "_nodes", "blocks", "_blocks"}

# Literals that are genuinely something else, with the reason: (path, text on the line).
ALLOWED = {
    ("tfstudio/export/families.py", 'if act != "gelu":'):
        "a Hugging Face config's hidden_act word (BERT's head applies it), not our activation",
}


def _axes_of(value) -> set[str]:
    if not isinstance(value, str):
        return set()
    return {axis for axis, values in AXES.items() if value in values}


def _strings(node: ast.AST) -> list[str]:
    """The string elements of a tuple, list or set literal (empty for anything else)."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant)
                and isinstance(e.value, str)]
    return []


def _collection_axis(strings: list[str], whole: int) -> str | None:
    """The axis when two or more strings, and all of ``whole`` elements, are its values."""
    if len(strings) < 2 or len(strings) != whole:
        return None
    common = set.intersection(*(_axes_of(s) for s in strings))
    if not common:
        return None
    axis = sorted(common)[0]
    # block types of ordinary words only ("attention", "norm") are as likely block families,
    # views or lessons: such a collection needs one unmistakable member
    if axis == "block type" and all(s in AMBIGUOUS for s in strings):
        return None
    return axis


def _reads(axis: str, source: str) -> bool:
    hints = READS_AXIS.get(axis, ())
    hints = (hints,) if isinstance(hints, str) else hints
    return any(h in source.lower() for h in hints)


def raw_kinds(source: str) -> list[tuple[int, str, str]]:
    """(line, value, why) for each raw kind literal in ``source`` that starts a second copy."""
    tree = ast.parse(source)
    found: list[tuple[int, str, str]] = []
    in_comparisons: set[int] = set()  # collections already judged as compared

    def compared(node: ast.Compare) -> None:
        operands = [node.left, *node.comparators]
        for i, op in enumerate(operands):
            if not isinstance(op, (ast.Constant, ast.Tuple, ast.List, ast.Set)):
                continue
            others = " ".join(ast.unparse(o) for j, o in enumerate(operands) if j != i)
            if isinstance(op, ast.Constant) and _axes_of(op.value):
                value = op.value
                if value in AMBIGUOUS and not _reads(AMBIGUOUS[value], others):
                    continue
                found.append((op.lineno, value, f"compared as a {sorted(_axes_of(value))[0]}"))
            strings = _strings(op)
            in_comparisons.add(id(op))
            axis = _collection_axis(strings, len(getattr(op, "elts", [])))
            if axis is None and strings and all(_axes_of(s) for s in strings) \
                    and any(s not in AMBIGUOUS or _reads(AMBIGUOUS[s], others) for s in strings):
                axis = sorted(_axes_of(strings[0]))[0]
            if axis:
                found.append((op.lineno, ", ".join(strings), f"compared as {axis}s"))

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            compared(node)
            continue
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and id(node) not in in_comparisons:
            axis = _collection_axis(_strings(node), len(node.elts))
            if axis:
                found.append((node.lineno, ", ".join(_strings(node)), f"a collection of {axis}s"))
        elif isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            axis = _collection_axis([k for k in keys if isinstance(k, str)], len(node.keys))
            if axis:
                found.append((node.lineno, ", ".join(keys), f"a table keyed by {axis}s"))
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                getattr(node.func, "id", "")
            if name in REGISTRY_CALLS:
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and "block type" in _axes_of(arg.value):
                        found.append((arg.lineno, arg.value, f"a block type asked of {name}"))
    for node in tree.body:  # NAME = "token_input": a module's own copy of a constant
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and _axes_of(node.value.value) and node.value.value not in AMBIGUOUS:
            found.append((node.lineno, node.value.value, "a module constant copying the home's"))
    return sorted(set(found))


def _allowed(path: str, line: str) -> bool:
    return any(path == p and text in line for p, text in ALLOWED)


def offenders() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if path.relative_to(PACKAGE).parts[0] in HOMES:
            continue
        text = path.read_text()
        lines = text.splitlines()
        for line, value, why in raw_kinds(text):
            if not _allowed(rel, lines[line - 1]):
                out.append(f"{rel}:{line}: '{value}' {why}")
    return out


def test_no_module_outside_graph_spells_a_kind_of_its_own():
    found = offenders()
    assert not found, ("import these from tfstudio/graph/kinds.py or block_types.py (or allow "
                       "one in ALLOWED with the reason it is something else):\n"
                       + "\n".join(found))


def test_every_allowance_still_matches_a_line():
    """An allowance whose line went away would hide the next literal written there."""
    for path, text in ALLOWED:
        assert text in (REPO / path).read_text(), f"{path} no longer has {text!r}"


@pytest.mark.parametrize("source, flagged", [
    ('if node.type == "attention": pass', ["attention"]),
    ('if node.type in ("attention", "cross_attention"): pass', ["attention, cross_attention"]),
    ('if kind == "mha": pass', ["mha"]),
    ('if p.placement == "post": pass', ["post"]),
    ('if p.position == "rope": pass', ["rope"]),
    ('KINDS = ("relu", "gelu", "swiglu")', ["relu, gelu, swiglu"]),
    ('NAMES = {"pre": "pre-norm", "post": "post-norm"}', ["pre, post"]),
    ('for s in ("learned", "sinusoidal"): pass', ["learned, sinusoidal"]),
    ('spec = get_spec("feed_forward")', ["feed_forward"]),
    ('TOKEN_INPUT = "token_input"', ["token_input"]),
])
def test_the_scan_flags_a_second_copy_of_a_kind(source, flagged):
    assert [value for _, value, _ in raw_kinds(source)] == flagged


@pytest.mark.parametrize("source", [
    'if key == "attention": pass',                        # a view's or switch's name
    'if combine == "norm": pass',                          # the statistic, not the block
    'FAMILY_ORDER = ("input", "embedding", "attention", "norm")',  # block families
    'TICKED = ("attention", "norm", "positions", "ffn")',  # lesson names
    'layer = transformer_lm(placement="post", activation="relu")',  # picking one value
    'shrinks = kv["mha"] > kv["gqa"]',                     # reading results by kind
    'n = graph.node("rnn")',                               # a node id
    'if node.type == bt.ATTENTION and p.position == kinds.ROPE: pass',
])
def test_the_scan_leaves_words_of_other_meanings_and_uses(source):
    assert raw_kinds(source) == []


def test_the_torch_modules_accept_exactly_the_homes_kinds():
    """nn/ may import only nn/ (the standalone export copies it), so it keeps its own tables
    of functions; they must cover the home's values, no more, no fewer."""
    from tfstudio.nn import feedforward, norm

    assert set(feedforward.GATES) == set(kinds.GATED)
    assert set(feedforward.ACTIVATIONS) | set(feedforward.GATES) == set(kinds.ACTIVATIONS)
    for kind in kinds.NORM_KINDS:
        assert norm.Norm(4, kind=kind).kind == kind
    with pytest.raises(ValueError):
        norm.Norm(4, kind="batchnorm")


def test_every_activation_has_one_hugging_face_word():
    from tfstudio.export.families import GATED_TO_HF, PLAIN_TO_HF

    assert set(GATED_TO_HF) == set(kinds.GATED)
    assert set(PLAIN_TO_HF) == set(kinds.ACTIVATIONS) - set(kinds.GATED)


def test_every_value_of_an_axis_has_its_label():
    for values, labels in [(kinds.ATTENTION_KINDS, kinds.ATTENTION_KIND_LABELS),
                           (kinds.PLACEMENTS, kinds.PLACEMENT_LABELS),
                           (kinds.PLACEMENTS, kinds.PLACEMENT_NAMES),
                           (kinds.ACTIVATIONS, kinds.ACTIVATION_LABELS),
                           (kinds.NORM_KINDS, kinds.NORM_KIND_LABELS),
                           (kinds.POSITIONAL_SCHEMES, kinds.POSITIONAL_SCHEME_LABELS),
                           (kinds.FFN_KINDS, kinds.FFN_KIND_LABELS)]:
        assert set(values) <= set(labels)
    assert set(kinds.GATED) <= set(kinds.ACTIVATIONS)
    assert set(kinds.ACTIVATION_FAMILIES) <= set(kinds.ACTIVATIONS)
    assert set(kinds.ABSOLUTE_SCHEMES) | set(kinds.IN_ATTENTION_SCHEMES) \
        | {kinds.NO_POSITIONS} == set(kinds.POSITIONAL_SCHEMES)
