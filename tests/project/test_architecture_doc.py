"""docs/ARCHITECTURE.md is the reference for the layout: its layer table must be the one the import
test enforces, it must name every package, and the repository must not lean on files outside it."""
import re
import subprocess
from pathlib import Path

from project.test_layers_imports import ALLOWED, ROOT

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "ARCHITECTURE.md"


def layer_table() -> dict[str, set[str]]:
    """The rows of the doc's layer table: | `package` | `a`, `b`, ... | what it is |."""
    text = DOC.read_text()
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and re.fullmatch(r"`\w+`", cells[0]):
            rows[cells[0].strip("`")] = set(re.findall(r"`(\w+)`", cells[1]))
    return rows


def test_the_documented_layers_are_the_enforced_ones():
    table = layer_table()
    assert set(table) == set(ALLOWED), "docs/ARCHITECTURE.md's layer table and " \
        "tests/project/test_layers_imports.py's ALLOWED name different packages"
    for package, allowed in ALLOWED.items():
        # the root API (load_graph, compile_graph, presets) is written as `tfstudio` in the doc
        expected = (allowed - ROOT) | ({"tfstudio"} if allowed & ROOT else set())
        assert table[package] == expected, f"{package}: doc {sorted(table[package])} " \
                                           f"vs enforced {sorted(expected)}"


def test_every_package_is_a_documented_layer():
    packages = {p.parent.name for p in (REPO / "tfstudio").glob("*/__init__.py")}
    assert packages == set(layer_table())


def test_readme_links_the_architecture_and_lists_the_whole_layout():
    readme = (REPO / "README.md").read_text()
    assert "docs/ARCHITECTURE.md" in readme
    layout = readme.split("## Layout", 1)[1]
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    top = {t.split("/")[0] for t in tracked} - {".gitignore"}
    packages = {p.parent.name for p in (REPO / "tfstudio").glob("*/__init__.py")}
    modules = {p.name for p in (REPO / "tfstudio").glob("*.py")} - {"__init__.py", "__main__.py"}
    for name in sorted(top | {f"tfstudio/{p}" for p in packages | modules}):
        assert f"`{name}" in layout, f"README's layout does not mention {name}"


def test_nothing_refers_to_files_outside_the_repository():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    outside = re.compile(r"DESIGN\.md|\.\./shared")
    offenders = [name for name in tracked
                 if name != "tests/project/test_architecture_doc.py"
                 and (REPO / name).suffix in (".py", ".md", ".toml", ".json", ".txt", "")
                 and (REPO / name).is_file()
                 and outside.search((REPO / name).read_text(errors="replace"))]
    assert not offenders, f"these files refer to files outside the repository: {offenders}"
