"""Every flag of every command, given the odd values a user's shell produces (nan, inf, -1, 0,
1e-300, 1e300, 2^70, "", a word, a missing path, a file, a read-only folder, a full disk), ends
in exit 0, 2 or 130; on 2 with one line that names the flag or the value, never a traceback,
exit 1 or exit 3 ("internal error").

The commands and flags are read from the argparse parsers themselves, so a new flag is fuzzed
without a change here. Each case runs in this process (``main(argv)``) on a tiny run with one
step, so a value that is accepted finishes in a second. The fast tier runs a fixed sample of the
(command, flag, value) cases; the slow tier runs all of them."""
from __future__ import annotations

import argparse
import random
from pathlib import Path

import pytest
from odd_paths import FULL_DEVICE, read_only_folder

from tfstudio.cli import COMMANDS, build_parser, main

pytestmark = pytest.mark.usefixtures("private_caches")

# placeholders, filled in per case by ``Places``
MISSING, A_FILE, READ_ONLY, FULL_DISK = "<missing>", "<file>", "<read-only>", "<full>"
ODD_VALUES = ("nan", "inf", "-inf", "-1", "0", "1e-300", "1e300", str(2 ** 70), "", "banana",
              MISSING, A_FILE, READ_ONLY, FULL_DISK)
ALLOWED_EXITS = {0, 2, 130}

TINY = [("--corpus", "sample:small"), ("--steps", "1"), ("--batch-size", "2"),
        ("--seq-len", "16")]
# each command's line with tight limits: (positionals, options); {run}, {hf}, {out} and {tmp}
# are filled in per case; a fuzzed flag replaces the option of the same name
BASE = {
    "gui": ([], [("--screenshot", "{out}.png"), ("--size", "160x120")]),
    "presets": ([], []),
    "inspect": (["tiny-gpt"], []),
    "train": (["tiny-gpt"], [("--out", "{out}"), *TINY, ("--eval-every", "0")]),
    "generate": (["{run}"], [("--max-new-tokens", "2"), ("--seed", "1")]),
    "explain": (["{run}"], [("--text", "ab")]),
    "export": (["{run}"], [("--format", "pytorch"), ("--out", "{out}")]),
    "import-hf": (["{hf}"], [("--out", "{out}")]),
    "compare": (["tiny-gpt"], [("--vary", "norm=pre,post"), ("--out", "{out}"), *TINY]),
    "eval": (["{run}"], [("--lengths", "8,16")]),
    "lesson": ([], []),  # the list of lessons: one lesson trains a dozen runs
}


def subcommand_parser(command: str) -> argparse.ArgumentParser:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def fuzzed_arguments(command: str) -> list[str]:
    """The command's flags that take a value, and its positionals as ``#0``, ``#1``..."""
    names, position = [], 0
    for action in subcommand_parser(command)._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        if not action.option_strings:
            names.append(f"#{position}")
            position += 1
        elif action.nargs != 0:  # store_true flags take no value to fuzz
            names.append(max(action.option_strings, key=len))
    return names


def all_cases() -> list[tuple[str, str, str]]:
    return [(command, flag, value) for command in COMMANDS
            for flag in fuzzed_arguments(command) for value in ODD_VALUES]


def test_every_command_has_a_base_line_and_the_fuzzer_sees_new_flags():
    assert set(BASE) == set(COMMANDS)
    assert "--temperature" in fuzzed_arguments("generate")
    assert "--grad-clip" in fuzzed_arguments("train") and "#0" in fuzzed_arguments("train")
    assert len(all_cases()) > 1000


class Places:
    """The paths the cases use: a trained run, its Hugging Face export, and the odd paths."""

    def __init__(self, run: Path, hf: Path, tmp: Path):
        self.run, self.hf, self.tmp = run, hf, tmp
        (tmp / "a-file.txt").write_text("not a folder, not a graph\n")
        self.odd = {MISSING: str(tmp / "no-such-thing"), A_FILE: str(tmp / "a-file.txt"),
                    READ_ONLY: str(read_only_folder(tmp) / "new"), FULL_DISK: str(FULL_DEVICE)}

    def fill(self, text: str) -> str:
        text = self.odd.get(text, text)
        return text.format(run=self.run, hf=self.hf, out=self.tmp / "out", tmp=self.tmp)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A one-step tiny-gpt run and its Hugging Face export."""
    root = tmp_path_factory.mktemp("fuzz")
    run, hf = root / "run", root / "hf"
    assert main(["train", "tiny-gpt", "--out", str(run), *sum(map(list, TINY), []),
                 "--eval-every", "0"]) == 0
    assert main(["export", str(run), "--format", "hf", "--out", str(hf)]) == 0
    return run, hf


def argv_for(command: str, flag: str, value: str, places: Places) -> list[str]:
    positionals, options = BASE[command]
    positionals = [places.fill(p) for p in positionals]
    options = [(name, places.fill(v)) for name, v in options if name != flag]
    value = places.fill(value)
    if flag.startswith("#"):
        index = int(flag[1:])
        positionals += [""] * (index + 1 - len(positionals))
        positionals[index] = value
    else:
        options.append((flag, value))
    flat = [f"{name}={v}" for name, v in options]
    if any(p.startswith("-") for p in positionals):  # "-1" as a positional, not a flag
        return [command, *flat, "--", *positionals]
    return [command, *positionals, *flat]


def run_case(command, flag, value, trained, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # a path like "" or "0" lands here, not in the repository
    monkeypatch.setenv("TFSTUDIO_DATA_DIR", str(tmp_path / "data"))
    places = Places(*trained, tmp_path)
    argv = argv_for(command, flag, value, places)
    try:
        code = main(argv)
    except SystemExit as exc:  # main returns its code; anything raising past it is a finding
        code = exc.code
    err = capsys.readouterr().err
    where = f"tfstudio {' '.join(argv)}\n{err}"
    assert code in ALLOWED_EXITS, where
    assert "Traceback" not in err and "internal error" not in err, where
    if code == 2:
        said = [line for line in err.splitlines()
                if line.startswith("tfstudio") and ": note: " not in line]
        assert len(said) == 1 and said[0] == err.strip().splitlines()[-1], where
        assert names_what_to_change(said[0], command, flag, places.fill(value)), where


def names_what_to_change(line: str, command: str, flag: str, value: str) -> bool:
    """The refusal names the flag, the value (a path), or the flag that fixes it (a corpus too
    short for --seq-len): a line a user can act on."""
    if (not flag.startswith("#") and flag in line) or (value or "''") in line:
        return True
    return any(other in line for other in fuzzed_arguments(command) if other.startswith("--"))


CASES = all_cases()
SAMPLE = random.Random(42).sample([c for c in CASES if c[0] != "gui"], 30)  # GUI: slow tier


@pytest.mark.parametrize("command,flag,value", SAMPLE)
def test_a_sample_of_odd_flag_values_ends_in_one_line_or_success(
        command, flag, value, trained, tmp_path, monkeypatch, capsys):
    run_case(command, flag, value, trained, tmp_path, monkeypatch, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("command,flag,value", CASES)
def test_every_odd_flag_value_ends_in_one_line_or_success(
        command, flag, value, trained, tmp_path, monkeypatch, capsys):
    run_case(command, flag, value, trained, tmp_path, monkeypatch, capsys)
