"""The trained weights in the Train workspace: loading a run's newest intact checkpoint, the
next-token chart on the user's prompt, and streamed generation. The model lives in a
:class:`ModelHost` on the background worker; what comes back are numbers and strings."""
from __future__ import annotations

from pathlib import Path

from .next_token_lines import answer_prompt, generation_offer, prompt_for_loaded_weights
from .run_lines import checkpoint_note, loaded_line


class GenerationController:
    def __init__(self, panel):
        self.panel = panel  # the TrainingPanel: its host, next-token view and state
        self._generated: list[int] = []
        self._tokenizer_cache: tuple[Path | None, object] = (None, None)

    def load_weights(self, run_dir: Path, opened: str = "", step: int | None = None) -> None:
        """Load the run's weights (``step``: those kept at that step, else the nearest kept
        ones); ``opened`` is added to the line saying so."""
        panel = self.panel
        def ready():
            panel.next_token.set_generation_available(
                *generation_offer(panel.host.model.family))
            probe = prompt_for_loaded_weights(panel.next_token.prompt.text(),
                                              (panel.snapshot or {}).get("text", ""))
            if probe is not None:  # not the user's own: ask for the task's answer
                panel.next_token.set_prompt(self.task_prompt(run_dir, probe))
            self.prompt_edited(panel.next_token.prompt.text())
            note = checkpoint_note(panel.host.checkpoint, panel.host.skipped)
            panel.runs.set_note(str(run_dir), note)
            panel._show_caption()
            if panel.snapshot is None and panel.tabs.currentWidget() is panel.positions:
                panel.shown_views.show_run_positions()  # the run's own tensors, now they are here
            panel.message(loaded_line(note, panel.host.step, opened))
            panel.weights_changed.emit(panel.host.model, panel.host.tokenizer)

        panel.host.load(run_dir, ready, panel._job_failed, step=step)

    @staticmethod
    def task_prompt(run_dir: Path, text: str) -> str:
        """For a synthetic task, the probe text up to its separator ("abc>"): the next token
        is then the first answer token."""
        try:
            from ...data import load_corpus
            from ...runs.folder import RunFolder
            task = load_corpus(RunFolder(run_dir).config().corpus).task
        except (OSError, ValueError):
            return text
        return answer_prompt(text, task.sep if task is not None else None)

    def prompt_edited(self, prompt: str) -> None:
        panel = self.panel
        host = panel.host
        if not host.ready or not prompt:
            return
        source = f"{panel.view_caption('next_token')} · after your prompt"
        # the answer is decoded by the tokenizer of the weights that computed it, and dropped
        # if other weights were loaded meanwhile (another run opened)
        decode, run_dir = self.decoder(), host.run_dir

        def show(logits):
            if host.run_dir == run_dir:
                panel.next_token.set_logits(logits, decode, source)

        host.next_logits(prompt, show, panel._job_failed)

    def prompt_entered(self) -> None:
        panel = self.panel
        if not panel.host.ready:
            panel.set_probe_text(panel.next_token.prompt.text())

    def generate(self, prompt: str, new_tokens: int) -> None:
        panel = self.panel
        if not panel.host.ready:
            panel.message("Generation uses trained weights: finish a run or open a past one")
            return
        if not prompt:
            panel.message("Type a prompt to continue first")
            return
        t, k, p = panel.next_token.settings
        self._generated = []
        tokenizer = panel.host.tokenizer
        panel.next_token.generation_started(prompt)

        def progress(ids):
            self._generated.extend(ids)
            panel.next_token.show_generated(tokenizer.decode(
                [i for i in self._generated if i != tokenizer.eot_id]))

        def done(_result):
            panel.next_token.generation_finished()

        def failed(exc):
            panel.next_token.generation_finished()
            panel._job_failed(exc)

        panel.host.generate(prompt, new_tokens, t, k, p, progress, done, failed)

    def stop_generation(self) -> None:
        panel = self.panel
        panel.host.stop_generation()
        panel.next_token.generation_finished("Generation stopped")

    def decoder(self):
        """Each candidate's text for the chart; the unknown token by its name, as the other
        special tokens are (it decodes to U+FFFD, which names no token)."""
        panel = self.panel
        tokenizer = panel.host.tokenizer if panel.host.ready else self.run_tokenizer()
        if tokenizer is None:
            return str
        from ...data.tokenizer import UNK

        unk = tokenizer.unk_id
        return lambda token_id: UNK if token_id == unk else tokenizer.token_strings([token_id])[0]

    def run_tokenizer(self):
        """The tokenizer the viewed run saved (read once per run folder)."""
        panel = self.panel
        if panel.viewed is None:
            return None
        cached = self._tokenizer_cache
        if cached[0] == panel.viewed.path:
            return cached[1]
        try:
            from ...data import load_tokenizer
            tokenizer = load_tokenizer(panel.viewed.path)
        except (OSError, ValueError):
            return None
        self._tokenizer_cache = (panel.viewed.path, tokenizer)
        return tokenizer
