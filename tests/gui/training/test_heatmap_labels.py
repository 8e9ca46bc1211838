"""Which token labels a small heatmap writes, without Qt (gui/training/heatmap_labels.py): every
k-th token, k cells at least a line apart, the hovered row always, its neighbours nearer than k
left out. A map laid out and painted with them: test_plots.py, test_heatmap_thinned_labels.py."""
from __future__ import annotations

from tfstudio.gui.training.heatmap_labels import (MAX_LABELLED, label_stride, labelled,
                                                  rows_to_label)


def test_labels_are_a_line_apart_however_small_the_cells():
    assert label_stride(line=14.0, cell=20.0) == 1   # cells taller than a line: every token
    assert label_stride(line=14.0, cell=14.0) == 1
    assert label_stride(line=14.0, cell=5.9) == 3    # 3 cells of 5.9 px: 17.7 px >= a line
    assert label_stride(line=14.0, cell=4.0) == 4    # 4 cells of 4 px: exactly a line


def test_every_kth_row_is_labelled_and_the_hovered_one_always():
    assert rows_to_label(range(10), 1) == list(range(10))
    assert rows_to_label(range(10), 1, hover=4) == list(range(10))  # nothing to make room for
    assert rows_to_label(range(44), 4) == list(range(0, 44, 4))
    # the hovered row 5 gets its label; 4 and 8, nearer than 4 rows, give it room; 0 is far
    assert rows_to_label(range(44), 4, hover=5) == [0, 5] + list(range(12, 44, 4))
    assert rows_to_label(range(44), 4, hover=8) == list(range(0, 44, 4))  # already labelled
    assert rows_to_label(range(20, 30), 3) == [21, 24, 27]        # a window: the rows it shows


def test_a_maps_tokens_are_written_up_to_96_each_way_and_any_number_in_a_window():
    assert labelled(True, True, 17, 17, scrollable=False)
    assert labelled(True, True, MAX_LABELLED, MAX_LABELLED, scrollable=False)
    assert not labelled(True, True, MAX_LABELLED + 1, 17, scrollable=False)  # would overlap
    assert labelled(True, True, 400, 400, scrollable=True)     # a window of readable cells
    assert not labelled(False, True, 17, 17, scrollable=False)  # a map without labels
    assert not labelled(True, False, 17, 17, scrollable=True)   # their layout did not fit
    assert not labelled(True, True, 0, 17, scrollable=True)     # no tokens to write
