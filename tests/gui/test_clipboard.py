"""Copy and paste's rules (gui/clipboard.py), without a QApplication: what a fragment holds,
where a paste lands, and what Paste accepts."""
from tfstudio.graph import Document, Graph, kept_tidy
from tfstudio.gui.clipboard import (fragment, from_text, looks_like_graph, offset_to, paste_command,
                                   pasted_piece, to_text)
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


def test_copy_paste_a_layer_group_keeps_its_inside_and_is_one_undo_step():
    """Edit > Copy then Paste (edit_menu: to_text, from_text, offset_to, paste_command; the
    window selects the new ids, test_editing's chain test checks it)."""
    doc = Document(load_preset("tiny-gpt"))
    original = doc.root.node("layers")
    piece = from_text(to_text(doc.root, ["layers"]))
    command, pasted = paste_command(doc.root, piece, (), offset_to(piece, (40.0, 900.0)))
    doc.execute(kept_tidy(command))
    assert len(pasted) == 1
    (new_id,) = pasted
    root = doc.root
    new = root.node(new_id)
    assert new_id != "layers" and new.is_group
    assert new.param("repeat") == original.param("repeat") == 2
    # every inner block and every inner wire came along
    assert set(new.subgraph.nodes) == set(original.subgraph.nodes)
    assert sorted(new.subgraph.edges) == sorted(original.subgraph.edges)
    assert len(new.subgraph.edges) == 9
    assert set(root.nodes) - set(load_preset("tiny-gpt").nodes) == {new_id}
    assert doc.undo_text.startswith("Paste")
    doc.undo()
    assert new_id not in doc.root.nodes


def test_paste_takes_a_copied_fragment_and_says_why_it_takes_anything_else():
    piece, refusal = pasted_piece(to_text(load_preset("tiny-gpt"), ["embed", "pos"]))
    assert set(piece.nodes) == {"embed", "pos"} and refusal == ""
    piece, refusal = pasted_piece("embed and pos")
    assert piece is None
    assert refusal.startswith("The clipboard holds no blocks to paste (") and refusal.endswith(")")
    assert pasted_piece("")[0] is None
