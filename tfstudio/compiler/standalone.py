"""One self-contained Python file for a compiled model: the tfstudio.nn source it uses, the
generated classes and a ``build_model()`` function. It needs torch and nothing of tfstudio."""
from __future__ import annotations

import ast
from pathlib import Path

STANDALONE_HEADER = '''"""A transformer exported by tfstudio. Needs only PyTorch.

    model = build_model()                       # fresh weights (the same init as in tfstudio)
    model.load_state_dict(state_dict)           # then the trained ones
    logits = model(ids)                         # ids: LongTensor [batch, length]

Encoder-decoders take model(src_ids, tgt_ids). Incremental decoding: cache = model.new_cache();
model(chunk, cache=cache) returns the logits of the new positions.
"""
'''


def standalone_source(model) -> str:
    """Python source defining ``Model`` and ``build_model()`` for ``model``'s architecture."""
    from .. import nn as nn_package

    directory = Path(nn_package.__file__).resolve().parent
    imports: list[str] = []
    bodies: list[str] = []
    for name in nn_package.SOURCE_FILES:
        text = (directory / name).read_text(encoding="utf-8")
        file_imports, body = _split_imports(text)
        imports += [i for i in file_imports if i not in imports]
        bodies.append(f"# {'-' * 20} tfstudio.nn.{name[:-3]} {'-' * 20}\n{body.strip()}\n")
    build = ('def build_model():\n'
             '    """The model with freshly initialised weights."""\n'
             '    return Model()\n')
    return "\n\n".join([STANDALONE_HEADER + "\n".join(imports), *bodies,
                        f"# {'-' * 20} generated from the graph {'-' * 20}\n" + model.source,
                        build])


def _split_imports(text: str) -> tuple[list[str], str]:
    """(absolute import statements, the rest) of a module; relative imports and the module
    docstring are dropped, since everything ends up in one file."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    imports: list[str] = []
    for i, stmt in enumerate(tree.body):
        is_doc = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or is_doc:
            span = range(stmt.lineno - 1, stmt.end_lineno)
            drop.update(span)
            relative = isinstance(stmt, ast.ImportFrom) and stmt.level > 0
            if not is_doc and not relative:
                imports.append("".join(lines[j] for j in span).strip())
    body = "".join(line for j, line in enumerate(lines) if j not in drop)
    return imports, body
