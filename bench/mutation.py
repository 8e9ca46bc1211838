"""Mutation score of source files or packages with mutmut (3.x): how many small edits of the source
(a ``<`` to ``<=``, a constant, a dropped call) the tests notice.

mutmut runs, per mutant, the selected tests that reach the mutated function; a mutant they still
pass on "survived" and points at behaviour no test pins down. The work happens in a scratch copy
of the repository, never in the checkout; slow tests are left out. ``--keep`` keeps the copy;
``--copy DIR --survivors`` reruns its survivors against the checkout's tests as they are now.

    python bench/mutation.py tfstudio/cli --tests tests/cli/test_errors.py --per-file 4 --keep
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
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
COLUMNS = ["killed", "timeout", "survived", "no tests", "not checked", "other"]
SELECTION = "pytest_add_cli_args_test_selection"


def scratch_copy(modules: list[str], tests: list[str]) -> Path:
    """A copy of the package, tests, resources and pyproject, with mutmut's settings added."""
    work = Path(tempfile.mkdtemp(prefix="tfstudio-mutmut-"))
    for folder in ("tfstudio", "tests", "resources"):  # resources: the presets tests load
        shutil.copytree(ROOT / folder, work / folder, ignore=shutil.ignore_patterns("__pycache__"))
    globs = json.dumps([m if m.endswith(".py") else m.rstrip("/") + "/*" for m in modules])
    settings = "\n".join([
        "", "[tool.mutmut]", 'source_paths = ["tfstudio"]', f"only_mutate = {globs}",
        f"{SELECTION} = {json.dumps(tests)}", 'also_copy = ["tests", "resources"]',
        'pytest_add_cli_args = ["-x", "-q", "-p", "no:cacheprovider", "-n", "0", "-m", "not slow"]',
        # forked from mutmut's main process (which ran the suite), rustbpe's thread pool hangs
        'process_isolation = "forkserver"',
        # a mutant stops after (its tests' CPU s + 1) * 2 * this; mutmut's 15: minutes a hang
        "timeout_multiplier = 10", ""])
    (work / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + settings)
    return work


def run_mutmut(work: Path, names: list[str], budget: float, max_children: int) -> str:
    """Runs ``mutmut run`` (on ``names`` only, if any) for at most ``budget`` s; how it ended."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {  # import the copy's
        "QT_QPA_PLATFORM": "offscreen", "OMP_NUM_THREADS": "1", "PYTEST_DEBUG_TEMPROOT": str(work)}
    with open(work / "mutmut.log", "a") as log:  # its progress spinner is thousands of lines
        proc = subprocess.Popen([sys.executable, "-m", "mutmut", "run", "--max-children",
                                 str(max_children), *names], cwd=work, env=env, stdout=log,
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


def results(work: Path) -> dict[str, dict[str, str]]:
    """{source file: {mutant: how it ended}}, from mutmut's .meta files."""
    from mutmut.stats import status_by_exit_code
    return {str(meta.relative_to(work / "mutants"))[:-len(".meta")]: {n: status_by_exit_code[c] for
            n, c in json.loads(meta.read_text())["exit_code_by_key"].items()}
            for meta in sorted((work / "mutants").rglob("*.py.meta"))}


def add_tests(work: Path, tests: list[str]) -> None:
    """Adds test files to a kept copy's selection and to mutmut's record of it, so that its
    verdicts stand (more tests can only kill more) and only the new tests are traced."""
    toml, stats = work / "pyproject.toml", work / "mutants" / "mutmut-stats.json"
    old = next(line for line in toml.read_text().splitlines() if line.startswith(SELECTION))
    selection = json.loads(old.split("=", 1)[1]) + [t for t in tests if t not in old]
    toml.write_text(toml.read_text().replace(old, f"{SELECTION} = {json.dumps(selection)}"))
    state = json.loads(stats.read_text())
    state["config_fingerprint"]["test_selection"] = hashlib.sha256(  # as mutmut 3.8 hashes it
        repr(tuple(selection)).encode()).hexdigest()[:12]
    stats.write_text(json.dumps(state))


def sample(work: Path, per_file: int) -> list[str]:
    """``per_file`` mutant names spread evenly over each file's (mutmut makes them all first)."""
    subprocess.run([sys.executable, "-c", "import mutmut.__main__ as m; m.copy_src_dir(); "
                    "m.create_mutants(2)"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    return [list(found)[int((i + 0.5) * max(len(found) / per_file, 1.0))]
            for found in results(work).values() for i in range(min(per_file, len(found)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="source files or package folders")
    parser.add_argument("--tests", nargs="+", help="the test files to run (--copy: to add)")
    parser.add_argument("--per-file", type=int, help="a sample: N spread over each file's")
    parser.add_argument("--copy", type=Path, help="work in this kept copy (tests refreshed)")
    parser.add_argument("--survivors", action="store_true", help="rerun the copy's survivors")
    parser.add_argument("--budget", type=float, default=1800, help="seconds before stopping")
    parser.add_argument("--max-children", type=int, default=2, help="parallel test runs")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy")
    args = parser.parse_args()
    missing = " ".join(m for m in args.modules if not (ROOT / m).exists()) or "-"[:not args.modules]
    problem = "mutmut is not installed (pip install mutmut)" if not importlib.util.find_spec(
        "mutmut") else (f"{args.copy}: not a kept copy" if not (args.copy / "mutants").is_dir()
                        else "") if args.copy else f"no such source file or folder: {missing}" \
        if missing else "" if args.tests else "name the test files with --tests"
    if problem:
        print(f"{problem}; see --help")
        return 2
    work = args.copy or scratch_copy(args.modules, args.tests)
    if args.copy:  # the checkout's tests as they are now; mutmut traces new ones itself
        shutil.copytree(ROOT / "tests", work / "tests", dirs_exist_ok=True)
        add_tests(work, args.tests) if args.tests else None
    start = time.perf_counter()
    try:
        names = ([n for found in results(work).values() for n, s in found.items()
                  if s == "survived"] if args.survivors else sample(work, args.per_file)
                 if args.per_file else [])
        ended = run_mutmut(work, names, args.budget, args.max_children) if names or not \
            args.survivors else "no survivors"
        if ended.startswith("failed"):
            print((work / "mutmut.log").read_text()[-4000:])
            return 1
        rows = {f"`{source}`": Counter(s if s in COLUMNS else "other" for s in found.values())
                for source, found in results(work).items()}
        rows["**all**"] = sum(rows.values(), Counter())
        print(f"| file | {' | '.join(COLUMNS)} | score |\n" + "|---" * (len(COLUMNS) + 2) + "|")
        for label, c in rows.items():  # score: a timeout counts as killed (the tests failed)
            decided = c["killed"] + c["survived"] + c["timeout"]
            score = f"{(c['killed'] + c['timeout']) / decided:.0%}" if decided else "-"
            print(f"| {label} | " + " | ".join(str(c[k]) for k in COLUMNS) + f" | {score} |")
        print(f"{time.perf_counter() - start:.0f} s, {ended}; in {work}")
    finally:
        if not (args.keep or args.copy):
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
