"""Mutation score of one module or package with mutmut (3.x): how many small edits of the source
(a ``<`` to ``<=``, a constant, a dropped call) the tests notice.

mutmut runs, per mutant, the selected tests that reach the mutated function; a mutant they still
pass on "survived" and points at behaviour no test pins down. The work happens in a scratch copy
of the repository, so the checkout is never edited. Tests marked slow are left out (each mutant
reaching them would cost that long).

    pip install mutmut
    python bench/mutation.py tfstudio/train/sampling.py --budget 900
    python bench/mutation.py tfstudio/runs --tests tests/test_runs_lock.py
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# mutmut's exit codes per mutant (mutmut.stats.status_by_exit_code), folded into the columns
STATUS = {1: "killed", 3: "killed", 37: "killed", 0: "survived", 36: "timeout", 24: "timeout",
          -24: "timeout", 152: "timeout", 255: "timeout", None: "not run", 2: "not run",
          33: "no tests", 5: "no tests", 34: "skipped"}
COLUMNS = ["killed", "survived", "timeout", "no tests", "not run"]


def default_tests(module: str) -> list[str]:
    """The test files that import ``module``'s package (tfstudio.train for
    tfstudio/train/trainer.py)."""
    package = ".".join(Path(module).with_suffix("").parts[:2])
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_*.py")
                  if package in p.read_text(encoding="utf-8"))


def scratch_copy(module: str, tests: list[str], timeout_multiplier: float) -> Path:
    """A copy of the package, tests, resources and pyproject, with mutmut's settings added."""
    work = Path(tempfile.mkdtemp(prefix="tfstudio-mutmut-"))
    for folder in ("tfstudio", "tests", "resources"):  # resources: the presets tests load
        shutil.copytree(ROOT / folder, work / folder, ignore=shutil.ignore_patterns("__pycache__"))
    settings = "\n".join([
        "", "[tool.mutmut]", 'source_paths = ["tfstudio"]',
        f"only_mutate = {json.dumps([module if module.endswith('.py') else module + '/*'])}",
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
        'pytest_add_cli_args = ["-x", "-q", "-p", "no:cacheprovider", "-m", "not slow"]',
        'also_copy = ["tests", "resources"]',
        # forked from mutmut's main process (which ran the suite), rustbpe's thread pool hangs
        'process_isolation = "forkserver"',
        # a mutant stops after (its tests' time + 1 s) * this: mutmut's 15 makes every endless
        # loop cost minutes; too little on a loaded machine and slow survivors pass as timeouts
        f"timeout_multiplier = {timeout_multiplier}", ""])
    (work / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + settings)
    return work


def run_mutmut(work: Path, budget: float, max_children: int) -> str:
    """Runs ``mutmut run`` for at most ``budget`` seconds; says how it ended."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OMP_NUM_THREADS": "1",
           # killed workers never clean their tmp_path folders: keep them in the scratch copy
           "PYTEST_DEBUG_TEMPROOT": str(work)}
    env.pop("PYTHONPATH", None)  # the mutated copy must be the one imported
    with open(work / "mutmut.log", "w") as log:  # its progress spinner is thousands of lines
        proc = subprocess.Popen([sys.executable, "-m", "mutmut", "run", "--max-children",
                                 str(max_children)], cwd=work, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=budget)
            return "ran to the end" if proc.returncode == 0 else f"failed ({proc.returncode})"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 15)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a worker ignoring SIGTERM
                os.killpg(proc.pid, 9)
            return "stopped by the time budget"
        except BaseException:  # Ctrl-C: never leave workers running
            os.killpg(proc.pid, 9)
            raise


def statuses(work: Path) -> dict[str, Counter]:
    """{source file: how many of its mutants ended how}, from mutmut's .meta files."""
    found = {}
    for meta in sorted((work / "mutants").rglob("*.py.meta")):
        codes = json.loads(meta.read_text()).get("exit_code_by_key", {})
        found[str(meta.relative_to(work / "mutants"))[:-len(".meta")]] = Counter(
            STATUS.get(code, "other") for code in codes.values())
    return found


def score(c: Counter) -> str:
    """(killed + timeout) / (killed + survived + timeout): a timeout means the tests failed."""
    decided = c["killed"] + c["survived"] + c["timeout"]
    return f"{(c['killed'] + c['timeout']) / decided:.0%}" if decided else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", help="a source file or package folder, e.g. tfstudio/runs")
    parser.add_argument("--tests", nargs="+", help="test files (default: those importing the "
                                                   "module's package)")
    parser.add_argument("--budget", type=float, default=1800, help="seconds before stopping")
    parser.add_argument("--max-children", type=int, default=2, help="parallel test runs")
    parser.add_argument("--timeout-multiplier", type=float, default=10.0)
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy")
    args = parser.parse_args()
    try:
        import mutmut  # noqa: F401
    except ImportError:
        print("mutmut is not installed; run `pip install mutmut` and try again")
        return 2
    module = args.module.rstrip("/")
    if not (ROOT / module).exists():
        print(f"no such source file or folder: {module}")
        return 2
    tests = args.tests or default_tests(module)
    work = scratch_copy(module, tests, args.timeout_multiplier)
    start = time.perf_counter()
    try:
        ended = run_mutmut(work, args.budget, args.max_children)
        if ended.startswith("failed"):
            print((work / "mutmut.log").read_text()[-4000:])
            return 1
        total: Counter = Counter()
        print("| file | " + " | ".join(COLUMNS) + " | score |")
        print("|---" * (len(COLUMNS) + 2) + "|")
        for source, c in statuses(work).items():
            total.update(c)
            print(f"| `{source}` | " + " | ".join(str(c[k]) for k in COLUMNS)
                  + f" | {score(c)} |")
        print(f"| **{module}** | " + " | ".join(str(total[k]) for k in COLUMNS)
              + f" | {score(total)} |")
        print(f"{time.perf_counter() - start:.0f} s, {ended}; tests: {' '.join(tests)}")
    finally:
        if args.keep:
            print(f"scratch copy kept in {work} (its survivors: mutmut results there)")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
