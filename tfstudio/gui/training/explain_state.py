"""What the Explain view is showing and what it decides, without Qt: whose weights (or which
training look) it reads, the text its walk is of and the token picked in it, the answer on
screen or the error instead, and the caption and status line those give. :class:`ExplainView`
draws it; every rule here is tested without a widget (tests/gui/training/test_explain_state.py).

The rules: a run change leaves nothing of the last run (:meth:`ExplainState.set_model`); a token
picked in one text is not carried into another, which walks to its own last token
(:meth:`~ExplainState.position`); an answer computed for weights since replaced is dropped
(:meth:`~ExplainState.accepts`); a failure leaves no answer of an earlier text
(:meth:`~ExplainState.failed`); a training look shows only while no weights are loaded
(:meth:`~ExplainState.takes_look`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...probes.snapshot import WALK_KEPT_EVERY
from .explain_lines import source_caption
from .token_text import display_token

NO_MODEL = ("Train or open a run, type a text and press Explain: every step from the token ids "
            "to the probabilities appears here. While a run trains, each look it takes inside "
            "the model shows here, with its step.")
NO_TEXT = ("Type a text and press Explain (or Enter): every step from the token ids to the "
           "probabilities appears here.")


@dataclass
class ExplainState:
    model: object = None
    tokenizer: object = None
    run_dir: Path | None = None    # the run whose checkpoints the embedding map replays
    run_name: str = ""             # the run the weights (or the look) come from
    weights_step: int | None = None  # ... the step of the weights
    weights_caption: str = ""      # ... and the caption the Train workspace wrote for them
    result: dict | None = None     # the answer on screen (explain_read.compute_explanation)
    error: str = ""                # why there is none, when computing failed
    walked_text: str | None = None  # the text the shown walk is of
    snapshot_step: int | None = None  # the training step whose look is shown
    shown_token: str = ""          # ... and the token its walk ends at

    # ------------------------------------------------------------------ transitions
    def set_model(self, model, tokenizer, run_dir: str | Path | None = None, *, run: str = "",
                  step: int | None = None, caption: str = "") -> None:
        """New weights (None: none, e.g. while a run trains): nothing of the last run stays."""
        loaded = model is not None
        self.model, self.tokenizer = model, tokenizer
        self.run_dir = Path(run_dir) if run_dir is not None and loaded else None
        self.run_name, self.weights_step = (run, step) if loaded else ("", None)
        self.weights_caption = caption if loaded else ""
        self.error = ""
        self.clear()

    def clear(self) -> None:
        """Nothing shown: no answer, no walk of a text, no training look."""
        self.result, self.walked_text, self.snapshot_step = None, None, None

    def position(self, text: str, picked: int | None) -> int:
        """The position to walk to in ``text``: the token ``picked`` in the walk on screen if
        that walk is of this text, else -1 (the text's last token)."""
        return -1 if picked is None or text != self.walked_text else int(picked)

    def accepts(self, model) -> bool:
        """Whether an answer computed with ``model`` still belongs on screen."""
        return self.model is model

    def shown(self, result: dict) -> None:
        self.result, self.error, self.walked_text = result, "", result["text"]

    def failed(self, exc: Exception) -> None:
        """Computing failed: the reason instead of any answer (none of an earlier text)."""
        self.clear()
        self.error = str(exc)

    def takes_look(self) -> bool:
        """A training look is shown only while no weights are loaded (the weights' walk wins)."""
        return self.model is None

    def show_look(self, step: int, token: str, run: str = "") -> None:
        """A look a training run took, at ``step``, its walk ending at ``token``."""
        self.clear()
        self.snapshot_step, self.shown_token, self.run_name = step, token, run

    # ------------------------------------------------------------------ what it says
    def caption(self) -> str:
        """Whose weights (or which look) every tab reads; "" when nothing is shown."""
        if self.model is not None:
            return self.weights_caption or source_caption(self.run_name, self.weights_step)
        if self.snapshot_step is not None:
            return source_caption(self.run_name, self.snapshot_step, training=True)
        return ""

    def status(self) -> str:
        """The line above the tabs ("" hides it): the error, what a training look is, or what
        to do next."""
        if self.error:
            return f"Cannot explain this: {self.error}"
        if self.snapshot_step is not None:
            return self.training_status()
        if self.result is not None:
            return ""
        return NO_MODEL if self.model is None else NO_TEXT

    def training_status(self, look_without_walk: int | None = None) -> str:
        """What the training look on screen is; ``look_without_walk``: the step of a newer
        look that carries no walk, so this one stays."""
        line = (f"Training, step {self.snapshot_step:,}: the run's latest look inside, the "
                f"forward pass of its probe text at its last token "
                f"{display_token(self.shown_token)}. Your own text, the logit lens and the "
                "embedding map come when the weights load (when the run ends or stops).")
        if look_without_walk is not None:
            line += (f" The look at step {look_without_walk:,} carries no walk (a run takes "
                     f"the walk every {WALK_KEPT_EVERY}th look): this is still step "
                     f"{self.snapshot_step:,}'s.")
        return line
