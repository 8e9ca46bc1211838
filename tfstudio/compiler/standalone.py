"""One self-contained Python file for a compiled model: the parts of tfstudio.nn it uses, the
generated classes and a ``build_model()`` function. It needs torch and nothing of tfstudio."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from .pruning import drop_argument_checks, prune, settings_of, short_docstrings

STANDALONE_HEADER = '''"""A transformer exported by tfstudio. Needs only PyTorch.

    model = build_model()                       # fresh weights (the same init as in tfstudio)
    model.load_state_dict(state_dict)           # then the trained ones
    logits = model(ids)                         # ids: LongTensor [batch, length]

Encoder-decoders take model(src_ids, tgt_ids). Incremental decoding: cache = model.new_cache();
model(chunk, cache=cache) returns the logits of the new positions.
"""
'''
BUILD = ('def build_model():\n'
         '    """The model with freshly initialised weights."""\n'
         '    return Model()\n')


@dataclass
class _Definition:
    """One top-level statement of a tfstudio.nn file: what it defines and what it reads."""

    file: str
    text: str
    defines: set[str]
    reads: set[str]


def standalone_source(model) -> str:
    """Python source defining ``Model`` and ``build_model()`` for ``model``'s architecture,
    with only the tfstudio.nn classes and functions it needs (and theirs, transitively)."""
    from .. import nn as nn_package

    directory = Path(nn_package.__file__).resolve().parent
    imports: list[str] = []
    definitions: list[_Definition] = []
    for name in nn_package.SOURCE_FILES:
        file_imports, file_definitions = _split(name, (directory / name).read_text("utf-8"),
                                                _unused_methods(model))
        imports += [i for i in file_imports if i not in imports]
        definitions += file_definitions
    definitions = [_specialised(d, model) for d in definitions]
    for d in definitions:
        d.text = short_docstrings(d.text)
    kept = _needed(definitions, _names_in(ast.parse(model.source)))
    blocks = "\n\n\n".join(d.text.strip("\n") for d in definitions if any(k is d for k in kept))
    return "\n\n\n".join([
        STANDALONE_HEADER + "\n".join(imports),
        f"# {'-' * 16} the tfstudio.nn blocks this model uses {'-' * 16}\n{blocks}",
        f"# {'-' * 16} generated from the graph {'-' * 16}\n{model.source.strip()}",
        BUILD])


def _specialised(d: _Definition, model) -> _Definition:
    """A class with the branches no instance in ``model`` takes removed (see pruning)."""
    import importlib

    tree = ast.parse(d.text)
    cls_node = tree.body[0] if tree.body else None
    if isinstance(cls_node, ast.FunctionDef):
        text = drop_argument_checks(d.text)
        return _Definition(d.file, text, d.defines, _names_in(ast.parse(text)))
    if not isinstance(cls_node, ast.ClassDef):
        return d
    module = importlib.import_module(f"{__package__.rsplit('.', 1)[0]}.nn.{d.file[:-3]}")
    cls = getattr(module, cls_node.name)
    instances = [m for m in model.modules() if isinstance(m, cls)]
    if not instances:
        return d
    text = prune(d.text, settings_of(cls_node, instances))
    return _Definition(d.file, text, d.defines, _names_in(ast.parse(text)))


def _needed(definitions: list[_Definition], roots: set[str]) -> list[_Definition]:
    """The definitions ``roots`` reach, following what each definition reads."""
    by_name = {name: d for d in definitions for name in d.defines}
    wanted = {"GraphModel", "GraphLayer"} | roots
    kept: list[_Definition] = []
    stack = [by_name[n] for n in wanted if n in by_name]
    while stack:
        d = stack.pop()
        if any(k is d for k in kept):
            continue
        kept.append(d)
        stack += [by_name[n] for n in d.reads if n in by_name]
    return kept


def _names_in(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _split(file: str, text: str, unused: set[str]) -> tuple[list[str], list[_Definition]]:
    """(absolute import statements, the other top-level statements) of a module; relative
    imports and the module docstring are dropped, since everything ends up in one file."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    imports: list[str] = []
    definitions: list[_Definition] = []
    for i, stmt in enumerate(tree.body):
        first = stmt.lineno - 1 - len(getattr(stmt, "decorator_list", ()))
        first = min([first] + [d.lineno - 1 for d in getattr(stmt, "decorator_list", ())])
        span = "".join(lines[first:stmt.end_lineno]).rstrip()
        span = _with_leading_comments(lines, first) + span
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the module docstring
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if not (isinstance(stmt, ast.ImportFrom) and stmt.level > 0):
                imports.append(span.strip())
            continue
        if isinstance(stmt, ast.ClassDef):
            span = (_with_leading_comments(lines, first)
                    + _without_methods(lines, first, stmt, unused))
        definitions.append(_Definition(file, span, _defined_by(stmt), _names_in(stmt)))
    return imports, definitions


def _unused_methods(model) -> set[str]:
    """Methods an exported model never needs: the printed repr's extras, tfstudio's probe
    hook, and the MoE loss when it has no experts."""
    unused = {"extra_repr", "attention_modules"}
    if not any(hasattr(m, "aux_loss") for m in model.modules() if m is not model):
        unused.add("aux_loss")
    return unused


def _without_methods(lines: list[str], first: int, cls: ast.ClassDef, drop: set[str]) -> str:
    """The class's source without the methods named in ``drop`` (and the blank line above
    each)."""
    skip: set[int] = set()
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name in drop:
            start = min([stmt.lineno] + [d.lineno for d in stmt.decorator_list]) - 1
            while start > first and not lines[start - 1].strip():
                start -= 1
            skip.update(range(start, stmt.end_lineno))
    return "".join(line for j, line in enumerate(lines[first:cls.end_lineno], first)
                   if j not in skip).rstrip()


def _with_leading_comments(lines: list[str], first: int) -> str:
    """The comment lines right above a statement (they explain it), as text."""
    start = first
    while start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    return "".join(lines[start:first])


def _defined_by(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    targets = getattr(stmt, "targets", None) or [getattr(stmt, "target", None)]
    return {n.id for t in targets if t is not None for n in ast.walk(t)
            if isinstance(n, ast.Name)}
