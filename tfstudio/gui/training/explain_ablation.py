"""The Explain view's Ablation tab: switches for every block, head and expert, which tokens the loss
is scored on (the whole text, the answer after the last separator, or positions A to B), and
what switching off changed, each loss labelled with the tokens it was computed on."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...probes.ablation import answer_span
from .explain_stages import probability
from .labels import display_token, muted

ABLATION_HINT = ("Tick a block, head or expert to switch it off (no retraining) and see the loss "
                 "and the next-token distribution change; the canvas draws the block off. "
                 "Right-click a block on the canvas does the same.")
SEPARATOR = ">"   # the answer follows the last one (the tasks' and probe texts' separator)
SPANS = (("the answer (after the last “>”)", "answer"), ("positions from … to …", "range"),
         ("the whole text only", "none"))


def span_label(tokens: list[str], span: tuple[int, int], what: str) -> str:
    """'the answer tokens (positions 9-16: "hgfedcba")': which tokens a loss was scored on."""
    shown = "".join(display_token(t) for t in tokens[span[0]:span[1]])
    return f"{what} (positions {span[0]}-{span[1] - 1}: “{shown}”)"


def chosen_span(kind: str, tokens: list[str], start: int, end: int
                ) -> tuple[tuple[int, int] | None, str, str]:
    """(span, its label, a note when the choice cannot be scored on this text)."""
    if kind == "answer":
        span = answer_span(tokens, SEPARATOR)
        if span is None:
            return None, "", (f"This text has no answer after a “{SEPARATOR}”: only the loss "
                              "on the whole text is shown. Choose positions to score a span.")
        return span, span_label(tokens, span, "the answer tokens"), ""
    if kind == "range":
        if not 1 <= start <= end < len(tokens):
            return None, "", (f"Positions {start} to {end} are not a span of this text "
                              f"(1 to {len(tokens) - 1}: position 0 has nothing to predict "
                              "it from).")
        return (start, end + 1), span_label(tokens, (start, end + 1), "your span"), ""
    return None, "", ""


def effect_text(effect, note: str = "") -> str:
    """The report: what was switched off and each loss, labelled with its tokens."""
    if effect is None:
        return "Nothing is switched off." + (f"\n{note}" if note else "")

    def top(tops) -> str:
        return ", ".join(f"{display_token(t)} {probability(p)}" for t, p in tops)

    lines = [f"Switched off: {', '.join(effect.targets)}.",
             f"Loss on the whole text {effect.loss_before:.4f} → {effect.loss_after:.4f}."]
    if effect.span is not None:
        lines.append(f"Loss on {effect.span_label} {effect.span_loss_before:.4f} → "
                     f"{effect.span_loss_after:.4f}.")
    elif note:
        lines.append(note)
    lines += [f"KL at position {effect.position}: {effect.kl:.4f} nats.",
              f"Before: {top(effect.top_before)}", f"After: {top(effect.top_after)}"]
    return "\n".join(lines)


class AblationPage(QWidget):
    """The tab; ``changed`` when a switch or the scored span changes."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.switches = QListWidget()
        self.switches.setToolTip("Tick a block, head or expert to switch it off (no "
                                 "retraining) and see what changes")
        self.switches.itemChanged.connect(lambda _item: self.changed.emit())
        self.span_kind = QComboBox()
        for text, kind in SPANS:
            self.span_kind.addItem(text, kind)
        self.span_kind.setToolTip("Which tokens the loss is also scored on: on a task, the "
                                  "answer is what training scores (the random prompt is "
                                  "never learned)")
        self.span_start, self.span_end = QSpinBox(), QSpinBox()
        for box in (self.span_start, self.span_end):
            box.setRange(1, 1)
            box.valueChanged.connect(lambda _v: self._span_edited())
        self.span_kind.currentIndexChanged.connect(lambda _i: self._span_edited())
        self.report = muted()
        self.report.setWordWrap(True)
        row = QHBoxLayout()
        for widget in (QLabel("Score the loss on"), self.span_kind, self.span_start,
                       QLabel("to"), self.span_end):
            row.addWidget(widget)
        row.addStretch(1)
        column = QVBoxLayout(self)
        column.addWidget(muted(ABLATION_HINT))
        column.addWidget(self.switches, 1)
        column.addLayout(row)
        column.addWidget(self.report)
        self._span_edited(emit=False)

    def _span_edited(self, emit: bool = True) -> None:
        ranged = self.span_kind.currentData() == "range"
        for box in (self.span_start, self.span_end):
            box.setEnabled(ranged)
        if emit and self.ablations():   # a span changes nothing with every block on
            self.changed.emit()

    def set_targets(self, targets: list[str]) -> None:
        self.switches.blockSignals(True)
        self.switches.clear()
        for target in targets:
            item = QListWidgetItem(target)
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Unchecked)
            self.switches.addItem(item)
        self.switches.blockSignals(False)

    def set_length(self, length: int) -> None:
        """The text has ``length`` tokens: positions 1..length-1 can be scored."""
        for box in (self.span_start, self.span_end):
            box.blockSignals(True)
            box.setRange(1, max(1, length - 1))
            box.blockSignals(False)

    def span_choice(self) -> tuple[str, int, int]:
        return self.span_kind.currentData(), self.span_start.value(), self.span_end.value()

    def ablations(self) -> list[str]:
        return [self.switches.item(i).text() for i in range(self.switches.count())
                if self.switches.item(i).checkState() == Qt.Checked]

    def set_ablations(self, targets: list[str]) -> None:
        wanted = set(targets)
        self.switches.blockSignals(True)
        for i in range(self.switches.count()):
            item = self.switches.item(i)
            item.setCheckState(Qt.Checked if item.text() in wanted else Qt.Unchecked)
        self.switches.blockSignals(False)
