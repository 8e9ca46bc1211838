"""The step bar's decisions, without Qt: which step each slider position stands for, whether
the slider moves at all, where its handle goes, and whether the views follow training after a
move. step_bar.py draws them."""
from __future__ import annotations

FOLLOW_TIP = "Show each new look as training takes it"
NOTHING_TO_FOLLOW = "Nothing shown here is training: its looks are all there are"


def slider_moves(steps: list[int]) -> bool:
    """A slider over one look (or none) would move nowhere: it moves over two or more."""
    return len(steps) > 1


def handle_at(steps: list[int], current: int | None) -> int | None:
    """The slider position of the step ``current`` (None: it kept no look, the handle stays)."""
    return steps.index(current) if current is not None and current in steps else None


def step_at(steps: list[int], index: int) -> int | None:
    """The step under the slider position ``index`` (None: no steps there)."""
    return steps[index] if 0 <= index < len(steps) else None


def follows_after_move(steps: list[int], index: int, live: bool) -> bool:
    """Moved back, the views replay and stop following; back at the newest look of a run that
    is training, they follow it again (a finished run has nothing to follow)."""
    return live and index == len(steps) - 1


def follow_tip(live: bool) -> str:
    return FOLLOW_TIP if live else NOTHING_TO_FOLLOW
