"""`tfstudio train`'s progress: a tqdm bar with rate and ETA on a terminal, plain lines (about
twenty over the run) when the output is a file or a pipe; numbers with 4 significant digits."""
import io
import re
import subprocess
import sys

from tfstudio.cli.progress import TrainingProgress
from tfstudio.train.events import EvalMetrics, Failed, Finished, Started, StepMetrics


class Terminal(io.StringIO):
    def isatty(self):
        return True


def events(total=100):
    yield Started(0, total, 12345, "cpu", "fp32", "causal-lm", "tiny-gpt")
    for step in range(1, total + 1):
        yield StepMetrics(step, loss=2.0 + 1 / step, lr=3e-4, grad_norm=1.0, layer_grad_norms={},
                          tokens_per_s=1000.0, elapsed_s=step * 0.01, tokens_seen=step * 64)
        if step % 50 == 0:
            yield EvalMetrics(step, val_loss=1.23456789, perplexity=3.4370)
    yield Finished(total, "completed", final_loss=1.1178264617919922, elapsed_s=1.0)


def test_plain_lines_when_the_output_is_not_a_terminal():
    out = io.StringIO()
    progress = TrainingProgress(out)
    for event in events():
        progress(event)
    lines = out.getvalue().splitlines()
    steps = [l for l in lines if re.match(r"step \d+/100: ", l)]
    assert 15 <= len(steps) <= 21 and "\r" not in out.getvalue()
    assert "step 50: validation loss 1.235, perplexity 3.437" in lines
    assert lines[-1] == "completed at step 100 in 1.0s; final loss 1.118"


def test_a_bar_with_rate_and_eta_on_a_terminal():
    out = Terminal()
    progress = TrainingProgress(out)
    for event in events():
        progress(event)
    text = out.getvalue()
    assert "\r" in text and "100/100" in text and "step/s" in text
    assert re.search(r"<\d\d:\d\d", text)  # tqdm's remaining time
    assert text.rstrip().endswith("completed at step 100 in 1.0s; final loss 1.118")


def test_a_failure_closes_the_bar_and_leaves_the_report_to_the_command():
    out = Terminal()
    progress = TrainingProgress(out)
    progress(Started(0, 10, 1, "cpu", "fp32", "causal-lm"))
    progress(Failed(0, "error", "ValueError: bad"))
    assert progress.bar is None and "bad" not in out.getvalue()


def test_storygen_runs_as_a_module_without_a_warning():
    # runpy warns when the package has imported the module before running it as __main__
    code = "import sys, tfstudio.data; assert 'tfstudio.data.storygen' not in sys.modules"
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
