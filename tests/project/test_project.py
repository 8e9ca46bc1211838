"""The README's two set-up commands, CI running exactly the test one (the same hypothesis
examples every run), and the README's lists and counts kept true to what they describe."""
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def setup_commands():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", section, re.S)


def test_readme_has_exactly_two_setup_commands():
    run, test = setup_commands()
    assert run.startswith("pip install torch==2.13.0") and run.endswith("&& tfstudio")
    assert test.startswith("pip install torch==2.13.0") and "pytest" in test


def test_ci_runs_the_readme_test_command():
    _, test = setup_commands()
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test in ci_lines


def test_ci_replays_the_same_property_examples_every_run_and_other_runs_draw_new_ones():
    """.ci/run sets CI before the test command, so hypothesis's "ci" profile replays one fixed
    set of examples (a property test cannot fail CI at random); without CI, as a developer runs
    the suite, each run draws new examples (derandomize is off)."""
    _, test = setup_commands()
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "export CI=true" in lines[:lines.index(test)]
    ask = [sys.executable, "-c", "from hypothesis import settings; print(settings().derandomize)"]
    bare = {"PATH": os.environ.get("PATH", "")}  # no CI, nor any CI vendor's variables
    for env, derandomized in ((bare, "False"), ({**bare, "CI": "true"}, "True")):
        out = subprocess.run(ask, env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == derandomized, env


@pytest.mark.slow  # a pytest with two workers of its own: about 4 CPU-s
def test_the_tests_of_one_xdist_group_run_on_one_worker(tmp_path):
    """A group's tests share a fixture that trains (the positions lesson's takes 40 CPU-s).
    pytest 9.2 with pytest-xdist 3.8 drops the groups without a word (pytest-xdist #1386), and
    every worker then trained it again: pyproject.toml keeps pytest below 9.2 until xdist mends it."""
    (tmp_path / "test_grouped.py").write_text(textwrap.dedent("""
        import os
        import pytest
        pytestmark = pytest.mark.xdist_group("one")

        @pytest.mark.parametrize("i", range(4))
        def test_on_a_worker(i):
            with open(os.path.join(os.path.dirname(__file__), f"ran-{i}"), "w") as f:
                f.write(os.environ["PYTEST_XDIST_WORKER"])
        """))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup",
                           "-p", "no:cacheprovider", "test_grouped.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len({(tmp_path / f"ran-{i}").read_text() for i in range(4)}) == 1


def test_readme_presets_are_the_built_in_ones():
    from tfstudio.presets import preset_names

    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Presets", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([a-z][a-z0-9-]*)`", section))
    assert named == set(preset_names())


def test_readme_states_no_test_count_that_a_new_test_would_make_stale():
    readme = (ROOT / "README.md").read_text()
    assert not re.search(r"\b\d[\d,]* of ~?\d[\d,]*", readme), \
        "give the command that counts tests instead of the count"
