"""``tfstudio compare``'s report defaults: without --target-loss the target is the worst
variant's final validation loss (so every variant reaches it), and running again with other
--seeds in the same folder adds seeds to the earlier ones instead of forgetting them."""
import json
import math
import re
import shutil
from pathlib import Path

import pytest

from tfstudio.cli import main

# both tests read one comparison: the group keeps them on one xdist worker, so it trains once
pytestmark = pytest.mark.xdist_group("compare-report-defaults")

TINY = ["--corpus", "sample", "--tokenizer", "char", "--steps", "4", "--seq-len", "16",
        "--batch-size", "4", "--lr", "3e-3", "--warmup-steps", "1"]


def final_val_loss(run_dir) -> float:
    records = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [r["val_loss"] for r in records if r["kind"] == "EvalMetrics"][-1]


def rows(out) -> dict[str, dict[str, str]]:
    lines = (out / "report.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| variant | seeds"))
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    table = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[cells[0]] = dict(zip(header, cells))
    return table


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare") / "cmp"
    assert main(["compare", "tiny-gpt", "--vary", "attention=mha,mqa", "--seeds", "1",
                 "--out", str(out), *TINY]) == 0
    return out


@pytest.mark.slow
def test_default_target_is_the_worst_final_loss_and_every_variant_reaches_it(compared):
    finals = {name: final_val_loss(compared / "runs" / slug / "seed-1")
              for name, slug in (("attention=mha", "attention-mha"),
                                 ("attention=mqa", "attention-mqa"))}
    worst = max(finals.values())
    text = (compared / "report.md").read_text()
    assert re.search(rf"validation loss of {worst:.3f}\b", text)
    table = rows(compared)
    assert all(table[name]["steps to target"] not in ("not reached", "n/a") for name in finals)


@pytest.mark.slow
def test_running_again_with_another_seed_keeps_the_earlier_seed(compared, tmp_path):
    compared = Path(shutil.copytree(compared, tmp_path / "cmp"))  # the fixture's stays seed 1's
    assert main(["compare", "tiny-gpt", "--vary", "attention=mha,mqa", "--seeds", "2",
                 "--out", str(compared), *TINY]) == 0
    assert json.loads((compared / "compare.json").read_text())["seeds"] == [1, 2]
    for name, slug in (("attention=mha", "attention-mha"), ("attention=mqa", "attention-mqa")):
        finals = [final_val_loss(compared / "runs" / slug / f"seed-{s}") for s in (1, 2)]
        mean, spread = sum(finals) / 2, abs(finals[0] - finals[1]) / math.sqrt(2)
        row = rows(compared)[name]
        assert row["seeds"] == "2"
        assert row["final val loss"] == f"{mean:.3f} ± {spread:.3f}"
