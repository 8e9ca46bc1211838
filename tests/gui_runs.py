"""A short real training run from the Train workspace's setup, for the GUI tests."""
from __future__ import annotations

WAIT_MS = 60_000


def short_run(panel, qtbot, *, steps: int = 6, every: int = 3, probe_every: int | None = None,
              corpus: str = "task:reverse", probe_text: str | None = None):
    """Train ``steps`` steps (batch 4 x 32, character tokens) evaluating every ``every`` and
    looking inside every ``probe_every`` (default ``every``) steps; returns the ended run."""
    s = panel.setup
    s.select_corpus(corpus)
    s.tokenizer.setCurrentText("char")
    s.steps.setValue(steps)
    s.batch.setValue(4)
    s.seq_len.setValue(32)
    s.warmup.setValue(1)
    s.eval_every.setValue(every)
    s.probe_every.setValue(probe_every or every)
    if probe_text is not None:
        s.probe_text.setText(probe_text)
    run = panel.train()
    assert run is not None
    qtbot.waitUntil(lambda: not run.active, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: panel.pacer.pending is None, timeout=WAIT_MS)  # its newest look
    return run
