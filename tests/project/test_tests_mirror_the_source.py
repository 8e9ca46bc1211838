"""tests/ mirrors tfstudio/: tests/<package>/ holds the tests of tfstudio/<package>/, each file
named test_<module>.py (a module's unit tests) or test_<behaviour>.py; the tests of a top-level
module (tfstudio/presets.py) sit at tests/ root, as the module does; tests of the repository as a
whole (docs, layering, bench scripts) in tests/project/; helpers and conftest.py at tests/ root
only. One module's tests live in one file: test_<module>_<more>.py beside test_<module>.py is a
second home for them."""
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
SOURCE = TESTS.parent / "tfstudio"
PROJECT = "project"


def source_modules(source: Path) -> dict[str, set[str]]:
    """Each package folder ('' for the root, 'gui/training') and its modules' names."""
    packages = {}
    for init in source.rglob("__init__.py"):
        folder = init.parent.relative_to(source).as_posix().strip(".")
        packages[folder] = {p.stem for p in init.parent.glob("*.py") if p.name != "__init__.py"}
    return packages


def misplaced(tests: Path, source: Path) -> list[str]:
    """Test files and helpers outside the documented layout, each with where it may go."""
    packages = source_modules(source)
    problems = []
    for path in sorted(tests.rglob("*.py")):
        rel = path.relative_to(tests)
        folder = rel.parent.as_posix().strip(".")
        if "__pycache__" in rel.parts:
            continue
        if not path.name.startswith("test_"):
            if folder:
                problems.append(f"tests/{rel}: helpers and conftest.py sit at tests/ root")
        elif not folder and path.stem[len("test_"):] not in packages[""]:
            problems.append(f"tests/{rel}: tests/ root holds only the tests of top-level modules "
                            f"({', '.join(sorted(packages['']))}); move it to tests/<package>/")
        elif folder and folder != PROJECT and folder not in packages:
            problems.append(f"tests/{rel}: tfstudio/{folder}/ is no package; use tests/<package>/ "
                            f"or tests/{PROJECT}/")
    return problems


def split_homes(tests: Path, source: Path) -> list[str]:
    """test_<module>_<more>.py beside test_<module>.py, <module> a module of that package."""
    packages = source_modules(source)
    problems = []
    for folder, modules in packages.items():
        here = tests / folder
        for module in modules:
            if not (here / f"test_{module}.py").exists():
                continue
            for other in sorted(here.glob(f"test_{module}_*.py")):
                if other.stem[len("test_"):] in modules:  # a module of its own (explain_view)
                    continue
                problems.append(f"tests/{other.relative_to(tests)} and test_{module}.py both "
                                f"hold tfstudio/{folder + '/' if folder else ''}{module}.py's "
                                f"tests: move its tests into test_{module}.py")
    return problems


def test_every_test_file_sits_in_the_folder_of_the_package_it_tests():
    problems = misplaced(TESTS, SOURCE)
    assert not problems, "\n".join(problems)


def test_each_module_has_its_tests_in_one_file():
    problems = split_homes(TESTS, SOURCE)
    assert not problems, "\n".join(problems)


def _tree(root: Path, files: list[str]) -> Path:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    return root


def test_the_layout_check_names_each_file_out_of_place(tmp_path):
    source = _tree(tmp_path / "src", ["__init__.py", "presets.py", "graph/__init__.py",
                                      "graph/switches.py", "gui/__init__.py",
                                      "gui/training/__init__.py", "gui/training/heatmap.py"])
    good = ["conftest.py", "gui_runs.py", "test_presets.py", "graph/test_switches.py",
            "graph/test_edits_keep_names.py", "gui/training/test_heatmap.py",
            "project/test_architecture_doc.py"]
    tests = _tree(tmp_path / "tests", good)
    assert misplaced(tests, source) == []
    _tree(tests, ["test_graph_switches.py", "nowhere/test_x.py", "graph/helpers.py"])
    found = "\n".join(misplaced(tests, source))
    assert "tests/test_graph_switches.py: tests/ root holds only" in found
    assert "tests/nowhere/test_x.py: tfstudio/nowhere/ is no package" in found
    assert "tests/graph/helpers.py: helpers and conftest.py sit at tests/ root" in found
    assert len(misplaced(tests, source)) == 3


def test_the_one_file_check_names_a_second_file_for_a_module(tmp_path):
    source = _tree(tmp_path / "src", ["__init__.py", "graph/__init__.py", "graph/switches.py",
                                      "graph/switches_table.py"])
    tests = _tree(tmp_path / "tests", ["graph/test_switches_leave_valid_graphs.py",
                                       "graph/test_switches_table.py"])
    assert split_homes(tests, source) == []  # one file each, whatever its name
    _tree(tests, ["graph/test_switches.py"])
    assert split_homes(tests, source) == [
        "tests/graph/test_switches_leave_valid_graphs.py and test_switches.py both hold "
        "tfstudio/graph/switches.py's tests: move its tests into test_switches.py"]
