"""Mutation testing of the training, runs, probes and data packages with mutmut.

mutmut changes the source one small edit at a time (a ``<`` to ``<=``, a constant, a dropped
call) and runs the tests that reach the changed function; a mutant the tests still pass on
"survived" and points at behaviour no test pins down. The score goes to docs/BENCHMARKS.md
("Mutation testing (mutmut)"), per file and per package.

mutmut is slow (each mutant is a test run), so the packages are measured in pieces: each run
mutates a few files (``--modules``, optionally only some functions with ``--mutants``) for at
most ``--budget`` seconds, and ``--store`` / ``--write`` keep its per-file results in
bench/results/mutation/<module>.json (mutant name -> status, the diff of each survivor, the
command). ``--write`` then rebuilds the docs section from every stored file, so pieces run at
different times (or by different people) report together; ``--report`` only rebuilds it.
The work happens in a scratch copy of the repository, so the checkout is never edited.

    pip install mutmut   # 3.x
    python bench/mutation.py --modules tfstudio/train/sampling.py --budget 900 --write
    python bench/mutation.py --modules tfstudio/train/trainer.py --mutants \\
        'tfstudio.train.trainer.x_clip*' --write       # one function's mutants only
    python bench/mutation.py --report                  # docs from the stored results
"""
from __future__ import annotations

import argparse
import ast
import datetime
import fnmatch
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "mutation"
PACKAGES = ["tfstudio/train", "tfstudio/runs", "tfstudio/probes", "tfstudio/data"]
# the tests that exercise each package (mutmut then runs, per mutant, only those that reach
# the mutated function)
TESTS = {
    "tfstudio/train": ["tests/test_mutants_train.py", "tests/test_train_safeguards.py",
                       "tests/test_sampling_boundaries.py", "tests/test_train_sampling.py",
                       "tests/test_train_runs.py", "tests/test_train_resume.py",
                       "tests/test_train_init_from.py"],
    "tfstudio/train/sampling.py": ["tests/test_sampling_boundaries.py",
                                   "tests/test_train_sampling.py"],
    "tfstudio/train/optim.py": ["tests/test_train_safeguards.py", "tests/test_train_sampling.py"],
    "tfstudio/train/generation.py": ["tests/test_mutants_train.py", "tests/test_train_runs.py",
                                     "tests/test_train_sampling.py",
                                     "tests/test_sampling_boundaries.py"],
    "tfstudio/train/pipeline.py": ["tests/test_mutants_train.py", "tests/test_train_safeguards.py",
                                   "tests/test_train_runs.py"],
    "tfstudio/train/objectives.py": ["tests/test_mutants_train.py",
                                     "tests/test_train_safeguards.py", "tests/test_train_runs.py"],
    "tfstudio/train/trainer.py": ["tests/test_mutants_train.py", "tests/test_train_safeguards.py",
                                  "tests/test_train_runs.py", "tests/test_train_resume.py",
                                  "tests/test_runs_checkpoints.py"],
    "tfstudio/train/events.py": ["tests/test_mutants_train.py", "tests/test_train_runs.py",
                                 "tests/test_train_resume.py"],
    "tfstudio/train/start.py": ["tests/test_mutants_train.py", "tests/test_train_resume.py",
                                "tests/test_runs_checkpoints.py",
                                "tests/test_runs_preflight_refusals.py"],
    "tfstudio/train/init_from.py": ["tests/test_mutants_train.py", "tests/test_train_init_from.py"],
    "tfstudio/train/device.py": ["tests/test_mutants_train.py", "tests/test_train_runs.py"],
    # torchrun itself is launched only by tests/test_train_cli.py (in subprocesses, which
    # mutmut cannot map to the mutated function); these run the same code in this process
    "tfstudio/train/distributed.py": ["tests/test_mutants_train.py"],
    "tfstudio/data/masking.py": ["tests/test_masking_edges.py", "tests/test_data_batches.py",
                                 "tests/test_train_safeguards.py"],
    "tfstudio/probes/positions.py": ["tests/test_probe_settings.py", "tests/test_probes.py"],
    "tfstudio/probes/walk.py": ["tests/test_mutants_probes.py", "tests/test_probes_walk.py",
                                "tests/test_explain_hf.py", "tests/test_probes_lens_ablation.py",
                                "tests/test_probes_embeddings.py"],
    "tfstudio/runs": ["tests/test_mutants_runs.py", "tests/test_checkpoint_writes.py",
                      "tests/test_runs_checkpoints.py", "tests/test_runs_lock.py",
                      "tests/test_runs_preflight.py", "tests/test_runs_preflight_refusals.py"],
    "tfstudio/runs/checkpoint.py": ["tests/test_mutants_runs.py",
                                    "tests/test_checkpoint_writes.py",
                                    "tests/test_runs_checkpoints.py"],
    "tfstudio/probes": ["tests/test_mutants_probes.py", "tests/test_probe_settings.py",
                        "tests/test_probes.py", "tests/test_probes_walk.py",
                        "tests/test_probes_lens_ablation.py", "tests/test_probes_heads.py",
                        "tests/test_probes_embeddings.py", "tests/test_rope_scaling.py"],
    "tfstudio/data": ["tests/test_mutants_data.py", "tests/test_masking_edges.py",
                      "tests/test_data_batches.py", "tests/test_data_corpus.py",
                      "tests/test_data_tasks.py", "tests/test_data_tokenizers.py",
                      "tests/test_import_tokenizer.py"],
}
# tests that train for many steps (or kill processes): every mutant reaching them would cost
# that long, and faster tests pin the same behaviour; always left out
SLOW = ["tests/test_train_runs.py::test_checkpoint_survives_being_killed_mid_write",
        "tests/test_train_runs.py::test_torch_compile_option_trains_like_eager",
        "tests/test_data_tasks.py::test_reverse_is_learnable_to_99_percent_in_seconds",
        "tests/test_probes_heads.py::test_tiny_induction_trained_forms_an_induction_head"]
TITLE = "## Mutation testing (mutmut)"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from equivalent_mutants import EQUIVALENT  # (the folder next to this script)

# mutmut's exit codes per mutant (mutmut.stats.status_by_exit_code), folded into the
# report's columns; anything else (a crash, "suspicious") counts as "other"
STATUS = {1: "killed", 3: "killed", 37: "killed", 0: "survived", 36: "timeout", 24: "timeout",
          -24: "timeout", 152: "timeout", 255: "timeout", None: "not run", 2: "not run",
          33: "no tests", 5: "no tests", 34: "skipped"}
COLUMNS = ["killed", "survived", "timeout", "no tests", "not run", "other"]
TRUSTED_MULTIPLIER = 10  # timeouts measured with less are flagged in the report
EARLY_MULTIPLIER = 2     # what the first stored runs used (before it was recorded)


# ---------------------------------------------------------------- running mutmut

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


def scratch_copy(modules: list[str], tests: list[str], timeout_multiplier: float) -> Path:
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
        "also_copy = [\"tests\", \"resources\"]",
        # workers fork from a server that never ran a test: forked from mutmut's main process
        # (which ran the suite), rustbpe's thread pool hangs and survivors pass for timeouts
        "process_isolation = \"forkserver\"",
        # a mutant stops after (its tests' time + 1 s) * this wall seconds: mutmut's 15 makes
        # every endless loop cost minutes; too little and slow survivors pass for timeouts
        f"timeout_multiplier = {timeout_multiplier}", ""])
    (work / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + settings)
    return work


def run_mutmut(work: Path, budget: float, max_children: int,
               mutants: list[str]) -> tuple[float, str]:
    """Runs ``mutmut run`` for at most ``budget`` seconds: (seconds, how it ended)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OMP_NUM_THREADS": "1"}
    env.pop("PYTHONPATH", None)  # the mutated copy must be the one imported
    # pytest's tmp_path folders under the scratch copy: killed workers never clean theirs up,
    # and in /tmp/pytest-of-<user> they filled the disk (77 GB in three hours)
    env["PYTEST_DEBUG_TEMPROOT"] = str(work)
    start = time.perf_counter()
    log = open(work / "mutmut.log", "w")  # its progress spinner is thousands of lines
    proc = subprocess.Popen([sys.executable, "-m", "mutmut", "run", "--max-children",
                             str(max_children), *mutants], cwd=work, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        proc.wait(timeout=budget)
        ended = "ran to the end" if proc.returncode == 0 else f"mutmut failed ({proc.returncode})"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a worker ignoring SIGTERM
            os.killpg(proc.pid, 9)
            proc.wait()
        ended = "stopped by the time budget"
    except BaseException:  # Ctrl-C: never leave workers running
        os.killpg(proc.pid, 9)
        raise
    log.close()
    if ended.startswith("mutmut failed"):
        print((work / "mutmut.log").read_text()[-4000:])
    return time.perf_counter() - start, ended


def read_meta(work: Path) -> dict[str, dict]:
    """{source file: mutmut's .meta (exit codes per mutant, hashes per function)}."""
    results = {}
    for meta in sorted((work / "mutants").rglob("*.py.meta")):
        source = str(meta.relative_to(work / "mutants"))[:-len(".meta")]
        results[source] = json.loads(meta.read_text())
    return results


def mutant_diff(work: Path, name: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    shown = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=work, env=env,
                           capture_output=True, text=True, timeout=120)
    lines = [ln for ln in shown.stdout.splitlines() if ln[:1] in "+-" and
             not ln.startswith(("+++", "---"))]
    return " / ".join(ln.strip() for ln in lines)[:300]


# ---------------------------------------------------------------- stored results

def result_path(source: str) -> Path:
    """bench/results/mutation/tfstudio.train.trainer.json for tfstudio/train/trainer.py."""
    return RESULTS / (source.removesuffix(".py").replace("/", ".") + ".json")


def source_hash(source: str) -> str:
    return hashlib.sha256((ROOT / source).read_bytes()).hexdigest()


def function_of(name: str) -> str:
    """mutmut's function key of a mutant: tfstudio.x.y.x_f__mutmut_3 -> x_f."""
    return name.partition("__mutmut_")[0].rpartition(".")[2]


def fresh_result(source: str, meta: dict, patterns: list[str], run: dict,
                 diff_of) -> dict:
    """One file's result from this run; mutants the run was not asked for are "not run"
    (so the report counts every mutant of the file, and stored results of them are kept)."""
    statuses = {name: STATUS.get(code, "other")
                if not patterns or any(fnmatch.fnmatch(name, p) for p in patterns) else "not run"
                for name, code in meta.get("exit_code_by_key", {}).items()}
    return {"source": source, "source_sha256": source_hash(source), "runs": [run],
            "function_hashes": meta.get("hash_by_function_name", {}),
            "mutants": dict(sorted(statuses.items())),
            "survivors": {n: diff_of(n) for n, s in sorted(statuses.items())
                          if s == "survived"},
            # the multiplier each timeout was measured with (a small one can pass a slow
            # survivor off as a timeout)
            "timeouts": {n: run["timeout_multiplier"] for n, s in sorted(statuses.items())
                         if s == "timeout"}}


def merged(old: dict | None, new: dict) -> dict:
    """``new`` plus what ``old`` decided about mutants ``new`` did not run, as long as the
    mutated function's source is unchanged (mutmut's per-function hash)."""
    if old is None:
        return new
    same = {f for f, h in new["function_hashes"].items()
            if old.get("function_hashes", {}).get(f) == h}
    mutants, survivors = dict(new["mutants"]), dict(new["survivors"])
    timeouts = dict(new["timeouts"])
    for name, status in old.get("mutants", {}).items():
        if function_of(name) in same and mutants.get(name, "not run") == "not run":
            mutants[name] = status
            if status == "survived" and name in old.get("survivors", {}):
                survivors[name] = old["survivors"][name]
            if status == "timeout":
                timeouts[name] = old.get("timeouts", {}).get(name, EARLY_MULTIPLIER)
    runs = [r for r in old.get("runs", []) if r["command"] != new["runs"][0]["command"]]
    return {**new, "runs": runs + new["runs"], "mutants": dict(sorted(mutants.items())),
            "survivors": dict(sorted(survivors.items())), "timeouts": dict(sorted(timeouts.items()))}


def store(result: dict) -> Path | None:
    """Merge ``result`` into its stored file; a file none of whose mutants ran (say, a folder
    run with --rerun) stays unstored, so it is still reported as not mutated."""
    path = result_path(result["source"])
    old = json.loads(path.read_text()) if path.exists() else None
    if old is None and all(s == "not run" for s in result["mutants"].values()):
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(merged(old, result), indent=1) + "\n")
    return path


def stored_results() -> dict[str, dict]:
    results = {}
    for path in sorted(RESULTS.glob("*.json")):
        result = json.loads(path.read_text())
        results[result["source"]] = result
    return results


# ---------------------------------------------------------------- the report

def has_functions(source: str) -> bool:
    tree = ast.parse((ROOT / source).read_text(encoding="utf-8"))
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(tree))


def package_of(source: str) -> str:
    return "/".join(source.split("/")[:2])


def _row(scope: str, c: Counter) -> str:
    decided = c["killed"] + c["survived"] + c["timeout"]
    score = f"{(c['killed'] + c['timeout']) / decided:.0%}" if decided else "-"
    rest = decided - c["equivalent"]
    reviewed = f"{(c['killed'] + c['timeout']) / rest:.0%}" if rest else "-"
    cells = [str(c[k]) + (f" ({c['short timeout']} short)" if k == "timeout" and
                          c["short timeout"] else "") for k in COLUMNS]
    return (f"| {scope} | " + " | ".join(cells)
            + f" | {c['equivalent']} | {c['survived'] - c['equivalent']} | {score} | {reviewed} |")


def package_section(package: str, results: dict[str, dict]) -> list[str]:
    mine = {s: r for s, r in results.items() if package_of(s) == package}
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / package).rglob("*.py")
                   if "__pycache__" not in p.parts)
    lines = [f"### {package}", ""]
    if not mine:
        return lines + ["Not mutated yet.", ""]
    rows = ["| file | " + " | ".join(COLUMNS) + " | equivalent | not reviewed | score | "
            "score without equivalent |", "|---" * (len(COLUMNS) + 5) + "|"]
    total: Counter = Counter()
    survivors, commands, stale = [], [], []
    for source, result in sorted(mine.items()):
        c = Counter(result["mutants"].values())
        c["short timeout"] = sum(result.get("timeouts", {}).get(n, EARLY_MULTIPLIER)
                                 < TRUSTED_MULTIPLIER
                                 for n, s in result["mutants"].items() if s == "timeout")
        names = [n for n, s in result["mutants"].items() if s == "survived"]
        c["equivalent"] = sum(n in EQUIVALENT for n in names)
        total.update(c)
        mark = ""
        if not (ROOT / source).exists() or source_hash(source) != result["source_sha256"]:
            mark = " (source changed since)"
            stale.append(source)
        rows.append(_row(f"`{source}`{mark}", c))
        survivors += [(n, result["survivors"].get(n, "?")) for n in names]
        commands += [r for r in result["runs"] if r not in commands]
    rows.append(_row(f"**{package}** ({len(mine)} of {len(files)} files)", total))
    unmutated = [f for f in files if f not in mine and has_functions(f)]
    empty = [f for f in files if f not in mine and not has_functions(f)]
    lines += rows + [""]
    if unmutated:
        lines += ["Not mutated yet: " + ", ".join(f"`{f}`" for f in unmutated) + ".", ""]
    if empty:
        lines += ["Nothing to mutate (no functions; mutmut changes only code inside them): "
                  + ", ".join(f"`{f}`" for f in empty) + ".", ""]
    if stale:
        lines += ["Changed since their run (rerun them): "
                  + ", ".join(f"`{s}`" for s in stale) + ".", ""]
    lines += [f"Survivors ({total['equivalent']} of {len(survivors)} reviewed as equivalent; "
              "mutmut's name: the change — why no test can kill it):", ""]
    lines += [f"- `{n}`: `{d}` — {EQUIVALENT.get(n, '**not reviewed**')}"
              for n, d in survivors] or ["- none"]
    lines += ["", "Commands:", ""]
    lines += [f"- `{r['command']}` ({r['seconds']:.0f} s, mutmut {r['mutmut']}, "
              f"{r['ended']}, {r['date']}, timeout multiplier "
              f"{r.get('timeout_multiplier', EARLY_MULTIPLIER):g}; tests: {', '.join(r['tests'])})"
              + (f" — {r['note']}" if r.get("note") else "") for r in commands]
    return lines + [""]


def report(results: dict[str, dict]) -> str:
    return "\n".join([
        "Score = (killed + timeout) / (killed + survived + timeout); \"score without "
        "equivalent\" leaves out the survivors reviewed as equivalent "
        "(bench/equivalent_mutants.py, with the reason). A timeout counts as killed (the "
        "tests did not pass); \"(N short)\": N of them were measured with a timeout multiplier "
        f"under {TRUSTED_MULTIPLIER} on a loaded machine and may be slow survivors "
        "(`--rerun timeout` measures them again). \"not run\": not reached within the "
        "run's time budget; \"no tests\": no selected test reaches the function. Rebuilt by "
        "`python bench/mutation.py --report` from bench/results/mutation/*.json, one file per "
        "mutated module, written by the commands listed under each package.", "",
        *[line for package in PACKAGES for line in package_section(package, results)]])


def _mutmut_version() -> str:
    try:
        from importlib.metadata import version
        return version("mutmut")
    except Exception:  # noqa: BLE001 - only for the report line
        return "?"


def write_docs() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from report import replace_section
    print(f"wrote {replace_section(TITLE, report(stored_results()))}")


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="+", default=PACKAGES,
                        help="source files or folders to mutate (default: the four packages)")
    parser.add_argument("--mutants", nargs="+", default=[], metavar="GLOB",
                        help="only these mutants (mutmut names, wildcards allowed, e.g. "
                             "'tfstudio.train.trainer.x_clip*'); stored results of the others "
                             "are kept")
    parser.add_argument("--rerun", nargs="+", default=[], metavar="STATUS",
                        help="only the mutants of --modules stored with these statuses, e.g. "
                             "'survived' (after adding tests: which are killed now) or "
                             "'timeout' (with a larger --timeout-multiplier)")
    parser.add_argument("--survivors", action="store_true", help="the same as --rerun survived")
    parser.add_argument("--tests", nargs="+", help="test files (default: per module, TESTS)")
    parser.add_argument("--deselect", action="append", default=[], metavar="TEST_ID",
                        help="leave out one test (pytest's --deselect; e.g. one failing "
                             "without any mutant, which would stop mutmut)")
    parser.add_argument("--budget", type=float, default=1800, help="seconds before stopping")
    parser.add_argument("--max-children", type=int, default=2, help="parallel test runs")
    parser.add_argument("--timeout-multiplier", type=float, default=10.0,
                        help="a mutant times out after (its tests' seconds + 1) * this wall "
                             "seconds (twice that in CPU seconds; mutmut's default: 15). Too "
                             "small on a loaded machine and slow survivors count as timeouts")
    parser.add_argument("--store", action="store_true",
                        help="keep the results in bench/results/mutation/")
    parser.add_argument("--write", action="store_true",
                        help="--store, then rebuild docs/BENCHMARKS.md from all stored results")
    parser.add_argument("--report", action="store_true",
                        help="only rebuild docs/BENCHMARKS.md from the stored results")
    parser.add_argument("--note", default="", help="a remark stored with this run's command")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy")
    args = parser.parse_args()
    # `timeout` and kill send SIGTERM: clean up (mutmut's workers) as for Ctrl-C
    signal.signal(signal.SIGTERM, _interrupt)
    if args.report:
        write_docs()
        return 0
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
    rerun = set(args.rerun) | ({"survived"} if args.survivors else set())
    if rerun:
        args.mutants += [name for source, result in stored_results().items()
                         if any(source == m or source.startswith(m + "/") for m in modules)
                         for name, status in result["mutants"].items() if status in rerun]
        if not args.mutants:
            print(f"no stored mutants of {', '.join(modules)} with status {', '.join(rerun)}")
            return 0
    tests = args.tests or tests_for(modules)
    args.deselect += [t for t in SLOW if t.split("::")[0] in tests and t not in args.deselect]
    work = scratch_copy(modules, tests + [f"--deselect={t}" for t in args.deselect],
                        args.timeout_multiplier)
    command = " ".join(["python bench/mutation.py", *map(shlex.quote, sys.argv[1:])])
    try:
        seconds, ended = run_mutmut(work, args.budget, args.max_children, args.mutants)
        if ended.startswith("mutmut failed"):
            print("nothing stored: mutmut did not run (see its output above)")
            return 1
        run = {"command": command, "tests": tests + [f"--deselect {t}" for t in args.deselect],
               "seconds": round(seconds), "ended": ended, "mutmut": _mutmut_version(),
               "date": datetime.date.today().isoformat(), "note": args.note,
               "timeout_multiplier": args.timeout_multiplier}
        results = {source: fresh_result(source, meta, args.mutants, run,
                                        lambda n: mutant_diff(work, n))
                   for source, meta in read_meta(work).items()}
        for source, result in results.items():
            c = Counter(result["mutants"].values())
            print(f"{source}: " + ", ".join(f"{c[k]} {k}" for k in COLUMNS if c[k]))
            for name, diff in result["survivors"].items():
                print(f"  survived {name}: {diff} — {EQUIVALENT.get(name, 'not reviewed')}")
            stored = store(result) if args.store or args.write else None
            if stored:
                print(f"  stored in {stored.relative_to(ROOT)}")
        print(f"{seconds:.0f} s, {ended}")
        if args.write:
            write_docs()
    finally:
        if args.keep:
            print(f"scratch copy kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
