"""Shrinks a tfstudio.nn class's source to what one model runs. Settings fixed at construction
(``self.position == "rope"``), equal in every instance the model holds, decide ``if`` statements
(just the branch taken stays) and conditional values (``y = a if self.scale else b``), also
through locals bound once to such a value; statements after a ``return`` or ``raise`` go, and
so do assignments nothing reads and the constructor's argument checks (an exported model is
built with the arguments tfstudio checked). Text edits on the original lines, so comments and
layout survive."""
from __future__ import annotations

import ast
import operator
from typing import Any

# attributes flipped at run time, never folded (``capture`` is too, but only tfstudio's probes
# flip it, and an exported file has none)
RUNTIME_SWITCHES = {"training"}
# calls whose answer an exported file knows: it runs in PyTorch, never inside torch.onnx.export
# (tfstudio's ONNX export traces the compiled model, with its explicit attention path)
KNOWN_CALLS = {"torch.onnx.is_in_onnx_export()": False}
_UNKNOWN = object()
_SCALARS = (bool, int, float, str, type(None))
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
        if values and all(isinstance(v, _SCALARS) and
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
    """``text`` after one simplification, or None when none is left."""
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text)
    known = {f"self.{name}": value for name, value in settings.items()} | KNOWN_CALLS
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    for scope in [*functions, tree]:
        scope_known = known | _constant_locals(scope, known) if scope is not tree else known
        edited = (_fold_statement(scope, lines, scope_known)
                  or _fold_conditional_value(scope, lines, scope_known)
                  or (_drop_dead_store(scope, lines) if scope is not tree else None))
        if edited is not None:
            return edited
    return None


def _fold_statement(scope: ast.AST, lines: list[str], known: dict[str, Any]) -> str | None:
    """Code after a ``return``/``raise`` removed, or a decidable ``if`` replaced by its
    branch."""
    for node in ast.walk(scope):
        for body in (getattr(node, f, None) for f in ("body", "orelse", "finalbody")):
            if not isinstance(body, list):
                continue
            for i, stmt in enumerate(body):
                if isinstance(stmt, (ast.Return, ast.Raise)) and i + 1 < len(body):
                    start, end = body[i + 1].lineno - 1, body[-1].end_lineno
                    return "".join(lines[:start] + lines[end:])
                if isinstance(stmt, ast.If) and not _is_elif(lines, stmt):
                    value = _evaluate(stmt.test, known)
                    if value is not _UNKNOWN:
                        edited = _take(lines, stmt, bool(value), alone=len(body) == 1)
                        if edited is not None:
                            return edited
    return None


def _fold_conditional_value(scope: ast.AST, lines: list[str],
                            known: dict[str, Any]) -> str | None:
    """``y = a if test else b`` (or ``return ...``) with a decidable test: ``y = a``."""
    for stmt in ast.walk(scope):
        value = getattr(stmt, "value", None)
        if not isinstance(stmt, (ast.Assign, ast.Return)) or not isinstance(value, ast.IfExp):
            continue
        truth = _evaluate(value.test, known)
        kept = value.body if truth else value.orelse
        if truth is _UNKNOWN or kept.lineno != kept.end_lineno:
            continue
        first, last = lines[value.lineno - 1].encode(), lines[value.end_lineno - 1].encode()
        piece = lines[kept.lineno - 1].encode()[kept.col_offset:kept.end_col_offset]
        joined = first[:value.col_offset] + piece + last[value.end_col_offset:]
        return "".join(lines[:value.lineno - 1] + [joined.decode()] + lines[value.end_lineno:])
    return None


def _constant_locals(fn: ast.FunctionDef, known: dict[str, Any]) -> dict[str, Any]:
    """Local names bound once, by a statement of the function's own body, to a value the
    settings decide (``window = self.window if 0 < self.window < k_len else 0``)."""
    stores: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
    params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    out: dict[str, Any] = {}
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            value = _evaluate(stmt.value, known | out)
            if stores[name] == 1 and name not in params and isinstance(value, _SCALARS):
                out[name] = value  # immutable, so no later statement can change it
    return out


def _drop_dead_store(fn: ast.FunctionDef, lines: list[str]) -> str | None:
    """An assignment to a local nothing reads, of a value with no call in it, removed (with
    the comment lines that explain it)."""
    loaded = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Load)}
    for node in ast.walk(fn):
        body = getattr(node, "body", None)
        if not isinstance(body, list) or len(body) < 2:  # a block never becomes empty
            continue
        for stmt in body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name) and \
                    stmt.targets[0].id not in loaded and _has_no_call(stmt.value):
                start = stmt.lineno - 1
                while start > 0 and lines[start - 1].lstrip().startswith("#"):
                    start -= 1
                return "".join(lines[:start] + lines[stmt.end_lineno:])
    return None


def _has_no_call(node: ast.expr) -> bool:
    return not any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Yield, ast.Await, ast.Lambda))
                   for n in ast.walk(node))


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


def _evaluate(node: ast.expr, known: dict[str, Any]) -> Any:
    """The value of an expression built from known names (``self.window``, a constant local),
    known calls and literals, or _UNKNOWN."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
        return known.get(ast.unparse(node), _UNKNOWN)
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_evaluate(e, known) for e in node.elts]
        return _UNKNOWN if any(v is _UNKNOWN for v in items) else tuple(items)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = _evaluate(node.operand, known)
        return _UNKNOWN if value is _UNKNOWN else not value
    if isinstance(node, ast.BoolOp):
        return _bool_op(node, known)
    if isinstance(node, ast.IfExp):
        truth = _evaluate(node.test, known)
        return _UNKNOWN if truth is _UNKNOWN else \
            _evaluate(node.body if truth else node.orelse, known)
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        return _compare(node, known)
    return _UNKNOWN


def _compare(node: ast.Compare, known: dict[str, Any]) -> Any:
    """``a < b < c``: false as soon as one known pair is, true when every pair is."""
    operands = [_evaluate(v, known) for v in [node.left, *node.comparators]]
    unknown = False
    for op, left, right in zip(node.ops, operands, operands[1:]):
        if left is _UNKNOWN or right is _UNKNOWN:
            unknown = True
        elif not _COMPARE[type(op)](left, right):
            return False
    return _UNKNOWN if unknown else True


def _bool_op(node: ast.BoolOp, known: dict[str, Any]) -> Any:
    """``and``/``or`` decided as soon as one known operand settles it."""
    is_and = isinstance(node.op, ast.And)
    values = [_evaluate(v, known) for v in node.values]
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
