"""The probe-text boxes (Run setup's and the Attention tab's) name the text of the look on
screen by a rule of the shown state, not by the moment that look is drawn. ProbeText is driven
here without Qt: two stand-in boxes and a stand-in run around a real ShownState."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tfstudio.gui.training.probe_text import ProbeText
from tfstudio.gui.training.shown_state import ShownState

RUN = Path("/runs/tiny-gpt-1")
DEFAULT = "abc>cba"  # what the trainer reads when the setup's box is left empty


class Box:
    """A line edit's text and focus."""
    def __init__(self, text: str = "", focus: bool = False):
        self._text, self.focus = text, focus

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:
        self._text = text

    def hasFocus(self) -> bool:
        return self.focus


class Run:
    """The run controller: its folder, whether it trains, the text it was told to read."""
    def __init__(self, probe_text: str = ""):
        self.run_dir, self.active = RUN, True
        self.config = SimpleNamespace(probe_text=probe_text, probe_every=10)
        self.sent: list[str] = []

    def set_probe_text(self, text: str) -> None:
        self.config.probe_text = text
        self.sent.append(text)


def look(step: int, text: str) -> dict:
    return {"step": step, "text": text}


def draw(panel, snapshot: dict) -> None:
    """What TrainingPanel.show_snapshot does for the boxes: the look on screen, then the boxes."""
    panel.shown.show_look(snapshot)
    panel.viewed = panel.shown.now.run
    ProbeText(panel).show_look(snapshot["text"])


def end(panel) -> None:
    panel.run.active = False
    panel.shown.run_ended([30])
    panel.viewed = panel.shown.now.run


def boxes(panel) -> tuple[str, str]:
    return panel.setup.probe_text.text(), panel.attention.text.text()


class Panel(SimpleNamespace):
    training = property(lambda self: self.run.active)


def make_panel(probe_text: str = "") -> Panel:
    """A panel whose run trains in RUN with the setup's ``probe_text`` (empty: the default)."""
    shown = ShownState()
    shown.start_run(RUN, "tiny-gpt · 04:33:47", 30, config=SimpleNamespace(probe_text=probe_text))
    panel = Panel(shown=shown, run=Run(probe_text), viewed=shown.now.run, messages=[],
                  setup=SimpleNamespace(probe_text=Box(probe_text)),
                  attention=SimpleNamespace(text=Box(probe_text)))
    panel.message = panel.messages.append
    return panel


def test_after_a_run_the_boxes_name_its_last_looks_text_whether_drawn_before_or_after_its_end():
    """The last look of a run left at the default text was drawn in the run's last task (boxes
    left empty: a live look's text differed from the setup's empty one) or, paced, just after
    the run ended (boxes filled): the same run ended with either, decided by timing."""
    drawn_live = make_panel()
    draw(drawn_live, look(30, DEFAULT))
    end(drawn_live)
    drawn_after = make_panel()
    end(drawn_after)
    draw(drawn_after, look(30, DEFAULT))
    assert boxes(drawn_live) == boxes(drawn_after) == (DEFAULT, DEFAULT)


def test_a_text_set_while_training_stays_in_the_boxes_until_a_look_reads_it():
    panel = make_panel()
    draw(panel, look(10, DEFAULT))
    panel.setup.probe_text.setText("the mill")
    ProbeText(panel).set("the mill")
    assert panel.run.sent == ["the mill"]
    draw(panel, look(20, DEFAULT))          # read before the text was changed
    assert boxes(panel) == ("the mill", "the mill")
    end(panel)
    draw(panel, look(30, DEFAULT))          # its last look, drawn after the end: still before
    assert boxes(panel) == ("the mill", "the mill")
    draw(panel, look(30, "the mill"))       # a look read it: the boxes follow the looks again
    draw(panel, look(10, DEFAULT))          # the slider back on a look kept before
    assert boxes(panel) == (DEFAULT, DEFAULT)


def test_the_boxes_never_change_under_the_users_typing():
    panel = make_panel()
    panel.attention.text.focus = True
    draw(panel, look(10, DEFAULT))
    assert boxes(panel) == ("", "")
    panel.attention.text.focus = False
    draw(panel, look(20, DEFAULT))
    assert boxes(panel) == (DEFAULT, DEFAULT)
