"""The README's two set-up commands, CI running exactly the test one, and the README's lists
and counts kept true to what they describe."""
import re
from pathlib import Path

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
