"""One self-contained Python file for a compiled model: the classes it builds, copied from their
source (tfstudio.nn's and any plug-in block's) with what they read, the generated classes and a
``build_model()`` function. It needs torch and nothing of tfstudio.

Units are copied whole, as written: a top-level statement, or a method. A class comes without
its private methods that nothing in the file calls (no ``self._name`` or ``"_name"`` anywhere in
what is copied, and not an override of a library base such as ``nn.Module``): a hook point's
table, which only tfstudio's probes read, stays behind. No branch is folded."""
from __future__ import annotations

import ast
import builtins
import inspect
import sys
import types
from dataclasses import dataclass, field

STANDALONE_HEADER = '''"""A transformer exported by tfstudio. build_model() needs only
PyTorch: it makes the model with fresh weights (then model.load_state_dict(state_dict)); logits =
model(ids), ids [batch, length] (an encoder-decoder: model(src_ids, tgt_ids)); decoding: cache =
model.new_cache(); model(chunk, cache=cache) gives the logits of the new positions."""
from __future__ import annotations
'''
BUILD = ('def build_model():\n'
         '    """The model with freshly initialised weights."""\n'
         '    return Model()\n')


class StandaloneError(ValueError):
    """A model whose classes cannot be copied into one file; the message names the class and
    what to change."""


def standalone_source(model) -> str:
    """Python source defining ``Model`` and ``build_model()`` for ``model``'s architecture:
    every class and function the generated code reaches, copied whole from its module's source
    (a module's constants and helpers along with it), in an order that defines each before use.
    Raises :class:`StandaloneError` for a definition that cannot be copied."""
    from .build import exec_namespace

    generated = ast.parse(model.source)
    copier = _Copier()
    namespace = exec_namespace()
    defined_here = {s.name for s in generated.body if isinstance(s, ast.ClassDef)}
    for name in sorted(_names_in(generated) - defined_here):
        if name in namespace:
            copier.bind(name, namespace[name], where="the generated code")
    copier.call(generated)
    return "\n\n\n".join([
        STANDALONE_HEADER + "\n".join(sorted(copier.imports, key=_import_order)),
        f"# {'-' * 16} the classes this model uses, copied from their source {'-' * 16}\n"
        + _joined(copier.in_order()),
        f"# {'-' * 16} generated from the graph {'-' * 16}\n{_without_docstring(model.source)}",
        BUILD])


def _joined(definitions: list[_Definition]) -> str:
    """The definitions two blank lines apart, except those that follow each other in their
    source with nothing between them (a group of constants stays as written)."""
    out, previous = "", None
    for d in definitions:
        if previous is not None:
            adjacent = (d.module, d.line) == (previous.module, previous.line + len(previous.lines))
            out += "\n" if adjacent else "\n\n\n"
        out, previous = out + d.text, d
    return out


@dataclass
class _Definition:
    module: str        # the module it was copied from
    line: int          # where it starts there
    lines: list[str]   # the top-level statement, with its decorators and the comments above it
    # a class's private methods nothing calls yet: name -> [(first, end) of its lines in `lines`]
    uncalled: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    @property
    def text(self) -> str:
        left_out = {i for spans in self.uncalled.values() for first, end in spans
                    for i in range(first, end)}
        return "".join(l for i, l in enumerate(self.lines) if i not in left_out).rstrip()


class _Copier:
    """Walks from the generated code's names to the definitions they reach, collecting each
    top-level statement once (dependencies first) and the imports of library names."""

    def __init__(self):
        self.imports: set[str] = set()
        self.definitions: list[_Definition] = []
        self._seen: set[tuple[str, str]] = set()
        self._owner: dict[str, str] = {}   # a top-level name in the file -> the module it's from
        self._needs: dict[str, list[str]] = {}   # module -> the modules it takes definitions from
        self._sources: dict[str, tuple[ast.Module, list[str]]] = {}  # module -> parsed, lines
        self._called: set[str] = set()   # attribute names, strings and names read so far
        self._waiting: dict[str, list] = {}   # a private method's name -> copy it when called

    def in_order(self) -> list[_Definition]:
        """The definitions module by module, each module after those it takes definitions from
        (a base class before its subclasses), and in its own source order within it."""
        ordered: list[str] = []
        visiting: set[str] = set()

        def visit(module: str) -> None:
            if module in ordered or module in visiting:  # a cycle keeps first-reached order
                return
            visiting.add(module)
            for needed in self._needs.get(module, []):
                visit(needed)
            ordered.append(module)

        for d in self.definitions:
            visit(d.module)
        return sorted(self.definitions, key=lambda d: (ordered.index(d.module), d.line))

    def bind(self, name: str, value, where: str) -> None:
        """Make ``name`` (meaning ``value`` in ``where``) defined in the file."""
        if isinstance(value, types.ModuleType):
            if value.__name__.split(".")[0] == "tfstudio":
                raise StandaloneError(f"{where} reads the module {value.__name__} as {name!r}; "
                                      "import the classes it needs from it by name instead")
            self._import(name, _import_module_line(name, value))
        elif isinstance(value, (type, types.FunctionType)):
            self._copy(value.__module__, value.__qualname__, where)
        else:
            raise StandaloneError(f"{where} reads {name!r}, a {type(value).__name__} that is "
                                  "neither a module, a class nor a function, so it cannot be "
                                  "copied into model.py")

    def _import(self, name: str, line: str) -> None:
        self._claim(name, f"import: {line}")
        self.imports.add(line)

    def _claim(self, name: str, owner: str) -> None:
        if self._owner.setdefault(name, owner) != owner:
            raise StandaloneError(f"two definitions named {name!r} ({self._owner[name]} and "
                                  f"{owner}) would share model.py; rename one of them")

    def _copy(self, module_name: str, name: str, where: str) -> None:
        if (module_name, name) in self._seen:
            return
        if "." in name:  # a nested or function-local class ('make.<locals>.Scale')
            raise StandaloneError(f"{name} (module {module_name}), read by {where}, is not "
                                  "defined at the top level of its module, so its source "
                                  "cannot be copied; define it at module level")
        self._seen.add((module_name, name))
        module = sys.modules.get(module_name)
        if module_name not in self._sources:
            self._sources[module_name] = _parsed(module, name, where)
        tree, lines = self._sources[module_name]
        statement = _top_level_binding(tree, name)
        if statement is None:
            raise StandaloneError(f"{name} (module {module_name}), read by {where}, has no "
                                  "top-level definition in its module's source; define it "
                                  "there with def, class or an assignment")
        self._claim(name, f"module {module_name}")
        start = _start(lines, statement)
        definition = _Definition(module_name, start, lines[start:statement.end_lineno])
        self.definitions.append(definition)

        def use(node: ast.AST) -> None:
            for read in sorted(_names_in(node) - {name}):
                self._resolve(module, tree, read, f"{name} in {module_name}")
            self.call(node)

        if not isinstance(statement, ast.ClassDef):
            use(statement)
            return
        for part in [*statement.decorator_list, *statement.bases, *statement.keywords]:
            use(part)   # the bases first: which of them are copied decides what overrides
        cls = getattr(module, name)
        members = [m for m in statement.body if not _uncalled_candidate(m, cls, self._seen)]
        if not members:   # a class of private methods only keeps them all
            members = statement.body
        for member in statement.body:
            if member in members or member.name in self._called:
                use(member)
                continue
            span = (_start(lines, member, blank_lines=True) - start, member.end_lineno - start)
            definition.uncalled.setdefault(member.name, []).append(span)
            self._waiting.setdefault(member.name, []).append(
                lambda member=member: (definition.uncalled.pop(member.name, None), use(member)))

    def call(self, node: ast.AST) -> None:
        """Note what ``node`` may call: attribute names, strings and names. A private method
        waiting under one of them is copied now (and what it calls, in turn)."""
        for called in sorted(_called_in(node) - self._called):
            self._called.add(called)
            for copy in self._waiting.pop(called, []):
                copy()

    def _resolve(self, module, tree: ast.Module, name: str, where: str) -> None:
        """Define ``name`` as ``module``'s top level binds it; a local variable or a builtin
        needs nothing."""
        statement = _top_level_binding(tree, name)
        if statement is None:
            if name in vars(module) and not hasattr(builtins, name):
                raise StandaloneError(f"{where} reads {name!r}, which its module sets without a "
                                      "top-level statement, so it cannot be copied")
            return
        if isinstance(statement, ast.ImportFrom) and (statement.level > 0 or
                                                      statement.module.split(".")[0] == "tfstudio"):
            value = vars(module)[name]
            self._needs.setdefault(module.__name__, []).append(getattr(value, "__module__", ""))
            self.bind(name, value, where)   # tfstudio's own: copied, not imported
        elif isinstance(statement, ast.Import) or isinstance(vars(module).get(name),
                                                             types.ModuleType):
            self._import(name, _import_module_line(name, vars(module)[name]))
        elif isinstance(statement, ast.ImportFrom):
            alias = next(a for a in statement.names if (a.asname or a.name) == name)
            as_name = f" as {alias.asname}" if alias.asname else ""
            self._import(name, f"from {statement.module} import {alias.name}{as_name}")
        else:
            self._copy(module.__name__, name, where)


def _uncalled_candidate(member: ast.stmt, cls: type, copied: set[tuple[str, str]]) -> bool:
    """Whether ``member`` is a private method (``_name``, not ``__dunder__``) that no base
    outside the file defines: torch calls its own privates (``_load_from_state_dict``) by
    name, so an override of one is always copied."""
    if not isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    name = member.name
    if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
        return False
    return not any(name in vars(base) for base in cls.__mro__[1:]
                   if (base.__module__, base.__qualname__) not in copied)


def _called_in(node: ast.AST) -> set[str]:
    """Every attribute name, string constant and name in ``node``: all a method can be called
    by (``self._x()``, ``getattr(m, "_x")``, ``f = _x`` in a class body)."""
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute):
            found.add(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            found.add(n.value)
        elif isinstance(n, ast.Name):
            found.add(n.id)
    return found


def _start(lines: list[str], statement: ast.stmt, blank_lines: bool = False) -> int:
    """The index of a statement's first line: its decorators and the comments right above it
    (they explain it) included, and with ``blank_lines`` the blank lines above those."""
    first = min([statement.lineno] + [d.lineno for d in
                                      getattr(statement, "decorator_list", ())]) - 1
    while first > 0 and (lines[first - 1].lstrip().startswith("#")
                         or blank_lines and not lines[first - 1].strip()):
        first -= 1
    return first


def _parsed(module, name: str, where: str) -> tuple[ast.Module, list[str]]:
    try:
        text = inspect.getsource(module)
    except (OSError, TypeError):
        raise StandaloneError(f"{name}, read by {where}, comes from a module whose source "
                              f"cannot be read ({getattr(module, '__name__', module)}); define it "
                              "in a .py file") from None
    return ast.parse(text), text.splitlines(keepends=True)


def _top_level_binding(tree: ast.Module, name: str) -> ast.stmt | None:
    """The last top-level statement of ``tree`` that binds ``name``."""
    found = None
    for statement in tree.body:
        if name in _bound_by(statement):
            found = statement
    return found


def _bound_by(statement: ast.stmt) -> set[str]:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in statement.names}
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = getattr(statement, "targets", None) or [statement.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _import_module_line(name: str, module: types.ModuleType) -> str:
    full = module.__name__
    if full == name:
        return f"import {name}"
    parent, _, last = full.rpartition(".")
    if last == name:
        return f"from {parent} import {name}"
    return f"import {full} as {name}"


def _import_order(line: str) -> tuple[bool, str]:
    return line.startswith("from"), line


def _names_in(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _without_docstring(source: str) -> str:
    """The generated source without its module docstring (it tells tfstudio users not to
    edit the file; an exported file is theirs)."""
    tree = ast.parse(source)
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        source = "".join(source.splitlines(keepends=True)[first.end_lineno:])
    return source.strip()
