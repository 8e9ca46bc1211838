"""Which problem mark a block shows, without a window (gui/problem_marks.py): its worst problem,
and in an open frame the worst of each small block inside, deeper problems counting for the
group that holds them. test_feedback sees the marks on the real canvas."""
from tfstudio.graph import Diagnostic
from tfstudio.gui.problem_marks import worst, worst_by_inner_block


def d(severity: str, node_id, path=()):
    return Diagnostic(severity, "m", "h", node_id, tuple(path))


def test_a_blocks_mark_is_its_worst_problem_whichever_comes_first():
    assert worst([]) is None
    assert worst([d("warning", "a")]) == "warning"
    assert worst([d("warning", "a"), d("error", "a")]) == "error"
    assert worst([d("error", "a"), d("warning", "a")]) == "error"


def test_each_small_block_in_a_frame_shows_its_own_worst_problem():
    inside = ("layers",)
    marks = worst_by_inner_block([d("error", "attn", inside), d("warning", "ffn", inside),
                                  d("warning", "attn", inside)], inside)
    assert marks == {"attn": "error", "ffn": "warning"}          # a later warning keeps the error


def test_a_problem_deeper_down_marks_the_group_block_that_holds_it():
    inside = ("enc",)
    deeper = [d("warning", "attn", ("enc", "layers")), d("error", "q", ("enc", "layers", "mix"))]
    assert worst_by_inner_block(deeper, inside) == {"layers": "error"}
    assert worst_by_inner_block(deeper[:1], inside) == {"layers": "warning"}
    assert worst_by_inner_block([d("error", None, inside)], inside) == {}  # the graph's: no block
