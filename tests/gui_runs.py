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


def train_folder(path, preset: str, **settings):
    """A real run of ``preset`` into ``path`` with the trainer every caller uses (byte
    tokens on sample:small, batch 2 x 16, unless ``settings`` say otherwise)."""
    import tfstudio
    from tfstudio.runs.config import TrainConfig
    from tfstudio.train.trainer import Trainer
    config = TrainConfig(**{"corpus": "sample:small", "tokenizer": "byte", "batch_size": 2,
                            "seq_len": 16, "eval_every": 0, **settings})
    assert Trainer(tfstudio.load_graph(preset), config, run_dir=path).run().kind == "Finished"
    return path


def past_runs(root):
    """Two past runs, as a user finds them. LOOKS: tiny-gpt on task:reverse (char tokens), 8
    steps, a look every 2 steps, checkpoints at 4 and 8, all kept. BARE: tiny-llama trained
    from the command line on sample:small (byte tokens), 6 steps, no look inside, warm-up 50
    (cut to 6), a probe text of its own."""
    looks = train_folder(root / "20261206-042800-tiny-gpt", "tiny-gpt", corpus="task:reverse",
                         tokenizer="char", steps=8, probe_every=2, checkpoint_every=4,
                         keep_checkpoints=0, warmup_steps=1, probe_text="abc>cba")
    bare = train_folder(root / "20261206-043125-tiny-llama", "tiny-llama", steps=6,
                        warmup_steps=50, probe_text="Eva visited the old mill by the river.")
    return {"looks": looks, "bare": bare}
