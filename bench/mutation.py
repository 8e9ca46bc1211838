"""Mutation testing of the training, runs, probes and data packages with mutmut.

mutmut changes the source one small edit at a time (a ``<`` to ``<=``, a constant, a dropped
call) and runs the tests that reach the changed function; a mutant the tests still pass on
"survived" and points at behaviour no test pins down. The score goes to docs/BENCHMARKS.md
("Mutation testing"), per package: killed / survived / timeout / not run.

mutmut is slow (each mutant is a test run), so the run is limited: ``--modules`` picks source
files or folders, ``--budget`` stops after that many seconds (mutants not reached count as "not
run" and the report says so). The work happens in a scratch copy of the repository, so the
checkout is never edited and no ``mutants/`` folder is left in it.

    pip install mutmut   # 3.x
    python bench/mutation.py --modules tfstudio/train/sampling.py tfstudio/train/optim.py \\
        --budget 900 --write
    python bench/mutation.py --budget 3600 --write   # all four packages (hours on 2 cores)
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
PACKAGES = ["tfstudio/train", "tfstudio/runs", "tfstudio/probes", "tfstudio/data"]
# the tests that exercise each package (mutmut then runs, per mutant, only those that reach
# the mutated function)
TESTS = {
    "tfstudio/train": ["tests/test_train_safeguards.py", "tests/test_sampling_boundaries.py",
                       "tests/test_train_sampling.py", "tests/test_train_runs.py",
                       "tests/test_train_resume.py", "tests/test_train_learning.py",
                       "tests/test_train_init_from.py"],
    "tfstudio/train/sampling.py": ["tests/test_sampling_boundaries.py",
                                   "tests/test_train_sampling.py"],
    "tfstudio/train/optim.py": ["tests/test_train_safeguards.py", "tests/test_train_sampling.py"],
    "tfstudio/data/masking.py": ["tests/test_masking_edges.py", "tests/test_data_batches.py",
                                 "tests/test_train_safeguards.py"],
    "tfstudio/probes/positions.py": ["tests/test_probe_settings.py", "tests/test_probes.py"],
    "tfstudio/runs": ["tests/test_checkpoint_writes.py", "tests/test_runs_checkpoints.py",
                      "tests/test_runs_lock.py", "tests/test_runs_preflight.py",
                      "tests/test_train_resume.py"],
    "tfstudio/probes": ["tests/test_probe_settings.py", "tests/test_probes.py",
                        "tests/test_rope_scaling.py"],
    "tfstudio/data": ["tests/test_masking_edges.py", "tests/test_data_batches.py", "tests/test_data_corpus.py",
                      "tests/test_data_tasks.py", "tests/test_data_tokenizers.py",
                      "tests/test_train_safeguards.py"],
}
TITLE = "## Mutation testing (mutmut)"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from equivalent_mutants import EQUIVALENT  # (the folder next to this script)

STATUS = {1: "killed", 3: "killed", 0: "survived", 36: "timeout", 24: "timeout",
          -24: "timeout", 152: "timeout", 255: "timeout", None: "not run", 33: "no tests",
          5: "no tests", 34: "skipped", 37: "killed"}


def tests_for(modules: list[str]) -> list[str]:
    chosen: list[str] = []
    for module in modules:
        key = module if module in TESTS else next(
            (p for p in sorted(TESTS, key=len, reverse=True) if module.startswith(p + "/")),
            None)
        for test in TESTS.get(key, []):
            if test not in chosen and (ROOT / test).exists():
                chosen.append(test)
    return chosen


def scratch_copy(modules: list[str], tests: list[str]) -> Path:
    """A copy of the package, tests and pyproject, with mutmut's settings appended."""
    work = Path(tempfile.mkdtemp(prefix="tfstudio-mutmut-"))
    shutil.copytree(ROOT / "tfstudio", work / "tfstudio",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("tests", "resources"):  # resources: the presets the tests load
        if (ROOT / folder).exists():
            shutil.copytree(ROOT / folder, work / folder,
                            ignore=shutil.ignore_patterns("__pycache__"))
    settings = "\n".join([
        "", "[tool.mutmut]",
        "source_paths = [\"tfstudio\"]",
        f"only_mutate = {json.dumps([m if m.endswith('.py') else m + '/*' for m in modules])}",
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
        "pytest_add_cli_args = [\"-x\", \"-q\", \"-p\", \"no:cacheprovider\"]",
        "also_copy = [\"tests\", \"resources\"]", ""])
    (work / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + settings)
    return work


def run_mutmut(work: Path, budget: float, max_children: int) -> tuple[float, str]:
    """Runs ``mutmut run`` for at most ``budget`` seconds: (seconds, how it ended)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OMP_NUM_THREADS": "1"}
    env.pop("PYTHONPATH", None)  # the mutated copy must be the one imported
    start = time.perf_counter()
    log = open(work / "mutmut.log", "w")  # its progress spinner is thousands of lines
    proc = subprocess.Popen([sys.executable, "-m", "mutmut", "run", "--max-children",
                             str(max_children)], cwd=work, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        proc.wait(timeout=budget)
        ended = "ran to the end" if proc.returncode == 0 else f"mutmut failed ({proc.returncode})"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 15)
        proc.wait()
        ended = "stopped by the time budget"
    log.close()
    if ended.startswith("mutmut failed"):
        print((work / "mutmut.log").read_text()[-4000:])
    return time.perf_counter() - start, ended


def read_results(work: Path) -> dict[str, dict[str, int | None]]:
    """{source file: {mutant name: exit code}} from mutmut's .meta files."""
    results = {}
    for meta in sorted((work / "mutants").rglob("*.py.meta")):
        source = str(meta.relative_to(work / "mutants"))[:-len(".meta")]
        results[source] = json.loads(meta.read_text()).get("exit_code_by_key", {})
    return results


def mutant_diff(work: Path, name: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    shown = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=work, env=env,
                           capture_output=True, text=True, timeout=120)
    lines = [ln for ln in shown.stdout.splitlines() if ln[:1] in "+-" and
             not ln.startswith(("+++", "---"))]
    return " / ".join(ln.strip() for ln in lines)[:300]


def report(results: dict, seconds: float, ended: str, modules: list[str],
           tests: list[str], work: Path, section: str = "") -> tuple[str, list[tuple[str, str]]]:
    counts: dict[str, Counter] = {}
    survivors = []
    for source, codes in results.items():
        package = "/".join(source.split("/")[:2])
        for name, code in codes.items():
            status = STATUS.get(code, "suspicious")
            counts.setdefault(source, Counter())[status] += 1
            counts.setdefault(package + " (all run files)", Counter())[status] += 1
            if status == "survived":
                survivors.append((name, mutant_diff(work, name)))
    reviewed = sum(name in EQUIVALENT for name, _ in survivors)
    columns = ["killed", "survived", "timeout", "no tests", "not run"]
    rows = ["| scope | " + " | ".join(columns) + " | score |",
            "|---" * (len(columns) + 2) + "|"]
    for scope, c in sorted(counts.items()):
        decided = c["killed"] + c["survived"] + c["timeout"]
        score = f"{(c['killed'] + c['timeout']) / decided:.0%}" if decided else "-"
        rows.append(f"| {scope} | " + " | ".join(str(c[k]) for k in columns) + f" | {score} |")
    not_run = [p for p in PACKAGES if not any(m.startswith(p) for m in modules)]
    body = "\n".join([
        f"Command: `python bench/mutation.py --modules {' '.join(modules)} --write"
        f"{' --section ' + section if section else ''}` "
        f"({seconds:.0f} s, mutmut {_mutmut_version()}, "
        f"{ended}).",
        f"Tests: {', '.join(f'`{t}`' for t in tests)}.", "",
        *rows, "",
        "Score = (killed + timeout) / (killed + survived + timeout); \"not run\" mutants were "
        "not reached within the budget.",
        "Only the files in the table were mutated"
        + (f"; no file of {', '.join(not_run)}." if not_run else "."),
        "", f"Survivors ({reviewed} of {len(survivors)} reviewed as equivalent; mutmut's "
        "name: the change, then why no test can kill it):", "",
        *([f"- `{n}`: `{d}` — {EQUIVALENT.get(n, '**not reviewed**')}" for n, d in survivors]
          or ["- none"]),
    ])
    return body, survivors


def _mutmut_version() -> str:
    try:
        from importlib.metadata import version
        return version("mutmut")
    except Exception:  # noqa: BLE001 - only for the report line
        return "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="+", default=PACKAGES,
                        help="source files or folders to mutate (default: the four packages)")
    parser.add_argument("--tests", nargs="+", help="test files (default: per module, TESTS)")
    parser.add_argument("--deselect", action="append", default=[], metavar="TEST_ID",
                        help="leave out one test (pytest's --deselect; e.g. one failing "
                             "without any mutant, which would stop mutmut)")
    parser.add_argument("--budget", type=float, default=1800, help="seconds before stopping")
    parser.add_argument("--max-children", type=int, default=2, help="parallel test runs")
    parser.add_argument("--write", action="store_true", help="update docs/BENCHMARKS.md")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy")
    parser.add_argument("--section", default="",
                        help="write under '## Mutation testing of SECTION (mutmut)' (so runs over "
                             "different modules keep separate sections)")
    args = parser.parse_args()
    try:
        import mutmut  # noqa: F401
    except ImportError:
        print("mutmut is not installed; run `pip install mutmut` (3.x) and try again")
        return 2
    modules = [m.rstrip("/") for m in args.modules]
    missing = [m for m in modules if not (ROOT / m).exists()]
    if missing:
        print(f"no such source file or folder: {', '.join(missing)}")
        return 2
    tests = args.tests or tests_for(modules)
    work = scratch_copy(modules, tests + [f"--deselect={t}" for t in args.deselect])
    try:
        seconds, ended = run_mutmut(work, args.budget, args.max_children)
        body, _ = report(read_results(work), seconds, ended, modules, tests, work,
                         args.section)
        print(body)
        if ended.startswith("mutmut failed"):
            print("not written to docs/BENCHMARKS.md: mutmut did not run (see its output above)")
            return 1
        if args.write:
            sys.path.insert(0, str(ROOT / "bench"))
            from report import replace_section
            # a title that starts with TITLE would be replaced along with TITLE's section
            title = f"## Mutation testing of {args.section} (mutmut)" if args.section else TITLE
            print(f"wrote {replace_section(title, body)}")
    finally:
        if args.keep:
            print(f"scratch copy kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
