"""The README's two set-up commands, and CI running exactly the test one."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
