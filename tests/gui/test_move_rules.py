"""Which blocks a drag moved (gui/move_rules.py), without a QApplication."""
from tfstudio.gui.move_rules import moved_blocks


def test_a_block_counts_as_moved_past_half_a_unit_across_and_down_together():
    placed = {"a": (100.0, 40.0), "b": (300.0, 40.0), "c": (500.0, 40.0)}
    drawn = {"a": (100.3, 40.1),     # 0.4: a jiggle, no move
             "b": (300.3, 40.3),     # 0.6 summed: moved, though each way is under half
             "c": (480.0, 40.0)}     # dragged
    assert moved_blocks(drawn, placed) == ["b", "c"]
    assert moved_blocks({"a": (100.5, 40.0)}, placed) == []          # exactly half: still
    assert moved_blocks({"a": (100.0, 39.4)}, placed) == ["a"]       # up counts as down


def test_a_block_the_graph_does_not_hold_is_not_a_move():
    """An item still drawn for a block an edit removed (its item goes on the next event)."""
    assert moved_blocks({"gone": (0.0, 0.0), "a": (90.0, 0.0)}, {"a": (0.0, 0.0)}) == ["a"]
