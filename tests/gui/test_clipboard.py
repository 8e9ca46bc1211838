"""Copy and paste's rules (gui/clipboard.py), without a QApplication: what a fragment holds,
where a paste lands, and what Paste accepts."""
from tfstudio.graph import Graph
from tfstudio.gui.clipboard import fragment, from_text, looks_like_graph, offset_to, to_text
from tfstudio.presets import load_preset


def test_a_paste_puts_the_pieces_top_left_corner_at_the_cursor():
    piece = fragment(load_preset("tiny-gpt"), ["embed", "pos"])
    left = min(n.pos[0] for n in piece)
    top = min(n.pos[1] for n in piece)
    dx, dy = offset_to(piece, (500.0, -20.0))
    assert (left + dx, top + dy) == (500.0, -20.0)
    assert offset_to(Graph(), (500.0, -20.0)) == (0.0, 0.0)  # nothing to place


def test_a_copied_fragment_keeps_the_wires_between_its_blocks_only():
    graph = load_preset("tiny-gpt")
    piece = from_text(to_text(graph, ["tokens", "embed", "final_norm"]))
    assert set(piece.nodes) == {"tokens", "embed", "final_norm"}
    assert [(e.src, e.dst) for e in piece.edges] == [("tokens", "embed")]
    assert looks_like_graph(to_text(graph, ["embed"])) and not looks_like_graph("embed")
