"""Shrinks a tfstudio.nn class's source to what one model runs: ``if`` statements whose test
reads only settings fixed at construction (``self.position == "rope"``), equal in every
instance the model holds, keep just the branch taken; statements after a ``return`` or
``raise`` go; so do the constructor's argument checks (an exported model is built with the
arguments tfstudio checked). Text edits on the original lines, so comments and layout
survive."""
from __future__ import annotations

import ast
import operator
from typing import Any

# attributes flipped at run time, never folded (``capture`` is too, but only tfstudio's probes
# flip it, and an exported file has none)
RUNTIME_SWITCHES = {"training"}
# calls whose answer an exported file knows: it runs in PyTorch, never inside torch.onnx.export
# (tfstudio's ONNX export traces the compiled model, with its explicit attention path)
KNOWN_CALLS = {"torch.onnx.is_in_onnx_export": False}
_UNKNOWN = object()
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def settings_of(cls_node: ast.ClassDef, instances: list) -> dict[str, Any]:
    """The plain attributes the class sets in ``__init__``/``_setup`` only, or as class
    attributes, with the value all ``instances`` share (those that differ are left out)."""
    in_class = _class_attributes(cls_node)
    in_init: set[str] = set()
    elsewhere: set[str] = set()
    for fn in cls_node.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                    isinstance(node.value, ast.Name) and node.value.id == "self":
                (in_init if fn.name in ("__init__", "_setup") else elsewhere).add(node.attr)
    out = {}
    for name in (in_init | in_class) - elsewhere - RUNTIME_SWITCHES:
        values = [m.__dict__.get(name, _UNKNOWN) if name in in_init
                  else getattr(type(m), name, _UNKNOWN) for m in instances]
        if values and all(isinstance(v, (bool, int, float, str, type(None))) and
                          type(v) is type(values[0]) and v == values[0] for v in values):
            out[name] = values[0]
    return out


def _class_attributes(cls_node: ast.ClassDef) -> set[str]:
    """The names the class body assigns (``supports_cache = True``)."""
    targets = [t for s in cls_node.body if isinstance(s, ast.Assign) for t in s.targets]
    targets += [s.target for s in cls_node.body if isinstance(s, ast.AnnAssign)]
    return {t.id for t in targets if isinstance(t, ast.Name)}


def prune(text: str, settings: dict[str, Any], also: set[str] = frozenset()) -> str:
    """``text`` (one top-level class) with every decidable ``if`` and dead statement removed,
    and its argument checks (see :func:`drop_argument_checks`)."""
    while True:
        edited = _one_edit(text, settings)
        if edited is None:
            return drop_argument_checks(text, also)
        text = edited


def drop_argument_checks(text: str, also: set[str] = frozenset()) -> str:
    """Without the checks of constructor arguments: ``if ...: raise`` statements and calls of
    ``_check*`` helpers in ``__init__``, ``_setup``, ``_check*`` helpers and the methods named
    in ``also`` (those the generated constructors call, such as ``tie_to``)."""
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    for fn in ast.walk(ast.parse(text)):
        if isinstance(fn, ast.FunctionDef) and (fn.name in ("__init__", "_setup", *also)
                                                or fn.name.startswith("_check")):
            checks = [s for s in fn.body if _is_check(s)]
            if len(checks) < len(fn.body):  # a function of nothing but checks keeps them
                for stmt in checks:
                    drop.update(range(stmt.lineno - 1, stmt.end_lineno))
    return "".join(line for i, line in enumerate(lines) if i not in drop)


def _is_check(stmt: ast.stmt) -> bool:
    """``if bad: [message = ...;] raise ...`` or a call ``_check_something(...)``."""
    if isinstance(stmt, ast.If):
        *before, last = stmt.body
        return not stmt.orelse and isinstance(last, ast.Raise) and \
            all(isinstance(s, ast.Assign) for s in before)
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
        isinstance(stmt.value.func, ast.Name) and stmt.value.func.id.startswith("_check")


def _one_edit(text: str, settings: dict[str, Any]) -> str | None:
    lines = text.splitlines(keepends=True)
    for node in ast.walk(ast.parse(text)):
        for body in (getattr(node, f, None) for f in ("body", "orelse", "finalbody")):
            if not isinstance(body, list):
                continue
            for i, stmt in enumerate(body):
                if isinstance(stmt, (ast.Return, ast.Raise)) and i + 1 < len(body):
                    start, end = body[i + 1].lineno - 1, body[-1].end_lineno
                    return "".join(lines[:start] + lines[end:])
                if isinstance(stmt, ast.If) and not _is_elif(lines, stmt):
                    value = _evaluate(stmt.test, settings)
                    if value is not _UNKNOWN:
                        edited = _take(lines, stmt, bool(value), alone=len(body) == 1)
                        if edited is not None:
                            return edited
    return None


def _is_elif(lines: list[str], stmt: ast.If) -> bool:
    return lines[stmt.lineno - 1].lstrip().startswith("elif")


def _take(lines: list[str], stmt: ast.If, truth: bool, alone: bool) -> str | None:
    """Replace the ``if`` statement by the branch ``truth`` picks."""
    start, end = stmt.lineno - 1, stmt.end_lineno
    indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
    if truth:
        branch = stmt.body
        kept = _dedent(lines[branch[0].lineno - 1:branch[-1].end_lineno])
    elif not stmt.orelse:
        if alone:
            return None  # the block would be left empty
        kept = []
    elif len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If) and \
            _is_elif(lines, stmt.orelse[0]):
        inner = stmt.orelse[0]
        kept = lines[inner.lineno - 1:inner.end_lineno]
        kept[0] = kept[0].replace("elif", "if", 1)
    else:
        kept = _dedent(lines[stmt.orelse[0].lineno - 1:stmt.orelse[-1].end_lineno])
    if kept and not kept[0].startswith(indent):
        return None
    return "".join(lines[:start] + kept + lines[end:])


def _dedent(block: list[str]) -> list[str]:
    return [line[4:] if line.startswith("    ") else line for line in block]


def _evaluate(node: ast.expr, settings: dict[str, Any]) -> Any:
    """The value of a test built from settings and literals, or _UNKNOWN."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.value.id == "self":
        return settings.get(node.attr, _UNKNOWN)
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        return KNOWN_CALLS.get(ast.unparse(node.func), _UNKNOWN)
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_evaluate(e, settings) for e in node.elts]
        return _UNKNOWN if any(v is _UNKNOWN for v in items) else tuple(items)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = _evaluate(node.operand, settings)
        return _UNKNOWN if value is _UNKNOWN else not value
    if isinstance(node, ast.BoolOp):
        return _bool_op(node, settings)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        left, right = _evaluate(node.left, settings), _evaluate(node.comparators[0], settings)
        if left is _UNKNOWN or right is _UNKNOWN:
            return _UNKNOWN
        return _COMPARE[type(node.ops[0])](left, right)
    return _UNKNOWN


def _bool_op(node: ast.BoolOp, settings: dict[str, Any]) -> Any:
    """``and``/``or`` decided as soon as one known operand settles it."""
    is_and = isinstance(node.op, ast.And)
    values = [_evaluate(v, settings) for v in node.values]
    for v in values:
        if v is not _UNKNOWN and bool(v) != is_and:
            return v  # a false operand of `and` / a true one of `or`
    return _UNKNOWN if any(v is _UNKNOWN for v in values) else values[-1]


def short_docstrings(text: str) -> str:
    """Each docstring of several lines cut to its first sentence, when that fits on one line
    (the exported file stays short; tfstudio.nn keeps the full text)."""
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or not body or \
                ast.get_docstring(node) is None:
            continue
        doc = body[0]
        if doc.end_lineno == doc.lineno:
            continue
        first = " ".join(ast.get_docstring(node).split("\n\n")[0].split())
        sentence = first.split(". ")[0].rstrip(".") + "."
        indent = lines[doc.lineno - 1][:doc.col_offset]
        line = f'{indent}"""{sentence}"""\n'
        if len(line) <= 101 and '"""' not in sentence:
            edits.append((doc.lineno - 1, doc.end_lineno, line))
    for start, end, line in sorted(edits, reverse=True):
        lines[start:end] = [line]
    return "".join(lines)
