"""Issue 25's bound for the Explain view's classes: none over 400 lines (split by job instead)."""
from __future__ import annotations

import ast
from pathlib import Path

TRAINING = Path(__file__).resolve().parent.parent / "tfstudio" / "gui" / "training"


def test_no_explain_class_is_over_400_lines():
    sizes = {}
    for path in sorted(TRAINING.glob("explain*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                sizes[f"{path.name}:{node.name}"] = node.end_lineno - node.lineno + 1
    assert "explain_view.py:ExplainView" in sizes
    assert {name: n for name, n in sizes.items() if n > 400} == {}
