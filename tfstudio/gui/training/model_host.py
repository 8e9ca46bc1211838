"""A model the GUI owns, loaded from a run folder's newest checkpoint that verifies (a damaged
newer one is passed over and named in ``skipped``): it answers custom prompts,
generates text and takes snapshots on new probe text once training has ended (or for a past
run). It is only ever touched on the :class:`Background` worker, one job at a time, so it never
races the GUI thread; what comes back are plain numbers and strings."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # (its worker runs on Qt: a model host itself needs none)
    from .background import Background


class ModelHost:
    def __init__(self, background: Background):
        self.background = background
        self.model = None
        self.tokenizer = None
        self.run_dir: Path | None = None
        self.step = 0
        self.window: int | None = None  # the run's trained length: generation slides past it
        # the checkpoint the weights came from, and each newer one passed over as damaged
        self.checkpoint: Path | None = None
        self.skipped: list[str] = []
        self._generation: int | None = None

    @property
    def ready(self) -> bool:
        return self.model is not None

    def clear(self) -> None:
        self.model = self.tokenizer = self.run_dir = self.checkpoint = None
        self.skipped = []

    def load(self, run_dir: str | Path, done, error, step: int | None = None) -> None:
        """Load the run's newest weights (``step``: the intact checkpoint kept nearest to
        that step) in the background; ``done()`` once ready."""
        run_dir = Path(run_dir)

        def job():
            import json

            from ...runs.folder import RunFolder
            folder = RunFolder(run_dir)
            model = folder.load_model("cpu")
            choice = folder.checkpoint()  # the one load_model read (verified once, cached)
            if step is not None:
                choice = nearest_checkpoint(folder, step, choice)
                if choice.path is not None:
                    from ...runs.checkpoint import load_checkpoint
                    load_checkpoint(choice.path, model, device="cpu")
                    model.eval()
            state = json.loads((choice.path / "state.json").read_text(encoding="utf-8"))
            return (model, folder.tokenizer(), int(state.get("step", 0)),
                    folder.trained_length(), choice)

        def loaded(result):
            self.model, self.tokenizer, self.step, self.window, choice = result
            self.checkpoint, self.skipped = choice.path, list(choice.skipped)
            self.run_dir = run_dir
            done()

        self.clear()
        self.background.submit(job, loaded, key="host-load", error=error)

    def snapshot(self, text: str, done, error) -> None:
        model, tokenizer, step = self.model, self.tokenizer, self.step

        def job():
            from ...probes import take_snapshot
            data = take_snapshot(model, tokenizer, text, step=step)
            data["custom"] = True
            return data

        self.background.submit(job, done, key="host-snapshot", error=error)

    def next_logits(self, prompt: str, done, error) -> None:
        """Logits [V] after the prompt's last token."""
        model, tokenizer = self.model, self.tokenizer

        def job():
            import torch

            from ...probes import probe_inputs
            inputs = probe_inputs(model, tokenizer, prompt, max_tokens=4096)
            with torch.no_grad():
                logits = model.eval()(*inputs.args)
            return np.asarray(logits[0, -1].float().cpu().numpy())

        self.background.submit(job, done, key="host-logits", error=error)

    def generate(self, prompt: str, new_tokens: int, temperature: float, top_k: int,
                 top_p: float, progress, done, error) -> None:
        """Stream new token ids to ``progress(list_of_ids)``; ``done(None)`` at the end."""
        model, tokenizer, window = self.model, self.tokenizer, self.window
        background = self.background
        job_id_box: list[int] = []

        def job(report):
            from ...probes import probe_inputs
            from ...train.generation import generate_ids
            inputs = probe_inputs(model, tokenizer, prompt, max_tokens=4096)
            kwargs = {}
            if model.family == "encoder-decoder":
                kwargs["source_ids"] = inputs.ids["source"]
            prompt_ids = inputs.ids[inputs.stream_role]
            for token in generate_ids(model, prompt_ids, max_new_tokens=new_tokens,
                                      temperature=temperature, top_k=top_k, top_p=top_p,
                                      stop_ids=[tokenizer.eot_id], window=window, **kwargs):
                if job_id_box and background.cancelled(job_id_box[0]):
                    return "stopped"
                report(token)
            return "done"

        job_id_box.append(self.background.submit(job, done, key="host-generate", error=error,
                                                 progress=progress, streaming=True))
        self._generation = job_id_box[0]

    def stop_generation(self) -> None:
        if self._generation is not None:
            self.background.cancel(self._generation)
            self._generation = None



def nearest_checkpoint(folder, step: int, newest):
    """The intact checkpoint kept nearest to ``step`` (an earlier one on a tie; damaged ones
    passed over), as a CheckpointChoice; ``newest`` (the folder's own choice) when it is
    that one."""
    from dataclasses import replace

    from ...runs.checkpoint import checkpoint_problem
    from .shown_state import kept_checkpoints
    kept = kept_checkpoints(folder.path)
    for best in sorted(kept, key=lambda s: (abs(s - step), s)):
        path = kept[best]
        if path == newest.path:
            return newest
        if checkpoint_problem(path) is None:
            return replace(newest, path=path, skipped=[])
    return newest
