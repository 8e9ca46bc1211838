"""No class in tfstudio/gui/ over 400 lines (issue 25): a class that grows past it does more
than one job and is split by job (as GraphScene into dropping, wiring and wire placement, and
NodeItem into state and painting)."""
from __future__ import annotations

import ast
from pathlib import Path

import tfstudio

GUI = Path(tfstudio.__file__).parent / "gui"
BOUND = 400


def class_sizes(root: Path) -> dict[str, int]:
    sizes = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                sizes[f"{path.relative_to(root)}:{node.name}"] = node.end_lineno - start + 1
    return sizes


def test_no_gui_class_is_over_400_lines():
    sizes = class_sizes(GUI)
    assert any(name.endswith(":MainWindow") for name in sizes)   # the walk found the classes
    over = {name: n for name, n in sizes.items() if n > BOUND}
    assert over == {}, f"split these by job: {over}"


def test_the_measure_counts_a_class_from_its_decorators_to_its_last_line(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(BOUND))
    (tmp_path / "big.py").write_text(f"import dataclasses\n\n@dataclasses.dataclass\n"
                                     f"class Big:\n{body}\n\n\nclass Small:\n    pass\n")
    assert class_sizes(tmp_path) == {"big.py:Big": BOUND + 2, "big.py:Small": 2}
