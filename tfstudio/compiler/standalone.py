"""One self-contained Python file for a compiled model: the parts of tfstudio.nn it uses, the
generated classes and a ``build_model()`` function. It needs torch and nothing of tfstudio."""
from __future__ import annotations

import ast
import importlib
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


# tfstudio's own bookkeeping, which an exported model never reads: the printed repr's extras,
# the probes' hooks (``hooked`` is folded to False first), and the graph and source a compiled
# model carries
NOT_EXPORTED = {"extra_repr", "attention_modules", "hooked", "graph", "source"}


@dataclass
class _Definition:
    """One top-level statement of a tfstudio.nn file: what it defines and what it reads."""

    file: str
    text: str
    defines: set[str]
    reads: set[str]

    def edited(self, text: str) -> _Definition:
        return _Definition(self.file, text, self.defines, _names_in(ast.parse(text)))


def standalone_source(model) -> str:
    """Python source defining ``Model`` and ``build_model()`` for ``model``'s architecture,
    with only the tfstudio.nn classes and functions it needs (and theirs, transitively), each
    cut down to the methods and branches this model runs."""
    generated = ast.parse(model.source)
    imports, definitions = _nn_definitions()
    definitions = [_specialised(d, model, generated) for d in definitions]
    blocks = "\n\n\n".join(d.text.strip("\n") for d in _used(definitions, generated))
    return "\n\n\n".join([
        STANDALONE_HEADER + "\n".join(imports),
        f"# {'-' * 16} the tfstudio.nn blocks this model uses, cut to its settings {'-' * 16}\n"
        f"{blocks}",
        f"# {'-' * 16} generated from the graph {'-' * 16}\n{_without_docstring(model.source)}",
        BUILD])


def _nn_definitions() -> tuple[list[str], list[_Definition]]:
    """(the import statements, the top-level definitions) of the tfstudio.nn source files."""
    from .. import nn as nn_package

    directory = Path(nn_package.__file__).resolve().parent
    imports: list[str] = []
    definitions: list[_Definition] = []
    for name in nn_package.SOURCE_FILES:
        file_imports, file_definitions = _split(name, (directory / name).read_text("utf-8"))
        imports += [i for i in file_imports if i not in imports]
        definitions += file_definitions
    return imports, definitions


def _specialised(d: _Definition, model, generated: ast.Module) -> _Definition:
    """A class without the members the exported model never reads and with the branches no
    instance in ``model`` takes removed (see pruning); functions lose their argument checks."""
    node = ast.parse(d.text).body[0]
    if isinstance(node, ast.FunctionDef):
        return d.edited(short_docstrings(drop_argument_checks(d.text)))
    if not isinstance(node, ast.ClassDef):
        return d
    module = importlib.import_module(f"{__package__.rsplit('.', 1)[0]}.nn.{d.file[:-3]}")
    instances = [m for m in model.modules() if isinstance(m, getattr(module, node.name))]
    text = d.text
    if instances:
        settings = settings_of(node, instances)
        unused = _unused_members(model) | _overridden(generated).get(node.name, set())
        text = prune(_without_members(text, unused), settings,
                     also=_called_by_constructors(generated))
    return d.edited(short_docstrings(text))


def _used(definitions: list[_Definition], generated: ast.Module) -> list[_Definition]:
    """The definitions the generated code reaches, in file order, less the private methods
    nothing calls (once a branch is pruned, the helper it called may have no caller left)."""
    definitions = list(definitions)
    while True:
        kept = _needed(definitions, _names_in(generated))
        called = {n.attr for d in kept for n in ast.walk(ast.parse(d.text))
                  if isinstance(n, ast.Attribute)}
        dropped = False
        for i, d in enumerate(definitions):
            uncalled = _private_methods(d) - called
            if uncalled and any(k is d for k in kept):
                definitions[i] = d.edited(_without_members(d.text, uncalled))
                dropped = True
        if not dropped:
            return [d for d in definitions if any(k is d for k in kept)]


def _private_methods(d: _Definition) -> set[str]:
    tree = ast.parse(d.text).body[0]
    if not isinstance(tree, ast.ClassDef):
        return set()
    return {f.name for f in tree.body if isinstance(f, ast.FunctionDef)
            and f.name.startswith("_") and not f.name.startswith("__")}


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


def _split(file: str, text: str) -> tuple[list[str], list[_Definition]]:
    """(absolute import statements, the other top-level statements) of a module; relative
    imports and the module docstring are dropped, since everything ends up in one file."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    imports: list[str] = []
    definitions: list[_Definition] = []
    for i, stmt in enumerate(tree.body):
        first = min([stmt.lineno - 1] + [d.lineno - 1 for d in getattr(stmt, "decorator_list", ())])
        span = _with_leading_comments(lines, first) + "".join(lines[first:stmt.end_lineno])
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the module docstring
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if not (isinstance(stmt, ast.ImportFrom) and stmt.level > 0):
                imports.append(span.strip())
            continue
        definitions.append(_Definition(file, span.rstrip(), _defined_by(stmt), _names_in(stmt)))
    return imports, definitions


def _unused_members(model) -> set[str]:
    """Members an exported model never needs: tfstudio's bookkeeping, and the MoE loss when
    the model has no experts."""
    if any(hasattr(m, "aux_loss") for m in model.modules() if m is not model):
        return NOT_EXPORTED
    return NOT_EXPORTED | {"aux_loss"}


def _overridden(generated: ast.Module) -> dict[str, set[str]]:
    """For each base class of the generated classes, the class attributes every generated
    subclass sets itself (``family``, ``BLOCKS``): the base's defaults are never read."""
    out: dict[str, set[str]] = {}
    for cls in generated.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        names = {t.id for s in cls.body if isinstance(s, ast.Assign) for t in s.targets
                 if isinstance(t, ast.Name)}
        for base in cls.bases:
            if isinstance(base, ast.Name):
                out[base.id] = out[base.id] & names if base.id in out else names
    return out


def _called_by_constructors(generated: ast.Module) -> set[str]:
    """The methods the generated ``__init__``s call on their blocks (``self.head.tie_to``)."""
    return {n.func.attr for fn in ast.walk(generated)
            if isinstance(fn, ast.FunctionDef) and fn.name == "__init__"
            for n in ast.walk(fn) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Attribute)}


def _without_members(text: str, drop: set[str]) -> str:
    """The class ``text`` without the methods and class attributes named in ``drop`` (and the
    blank lines above each)."""
    lines = text.splitlines(keepends=True)
    cls = ast.parse(text).body[0]
    skip: set[int] = set()
    for stmt in cls.body:
        if _member_names(stmt) and _member_names(stmt) <= drop:
            start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
            start -= 1
            while start > 0 and not lines[start - 1].strip():
                start -= 1
            skip.update(range(start, stmt.end_lineno))
    return "".join(line for j, line in enumerate(lines) if j not in skip).rstrip()


def _member_names(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, ast.FunctionDef):
        return {stmt.name}
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return _defined_by(stmt)
    return set()


def _without_docstring(source: str) -> str:
    """The generated source without its module docstring (it tells tfstudio users not to
    edit the file; an exported file is theirs)."""
    tree = ast.parse(source)
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        source = "".join(source.splitlines(keepends=True)[first.end_lineno:])
    return source.strip()


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
