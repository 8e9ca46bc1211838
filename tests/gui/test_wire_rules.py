"""Wiring by hand without a window (gui/wire_rules.py): which ports a dragged wire may end
on, the one undo step a drop on a port makes (a new wire, one replacing the wire in an
occupied input, a picked-up wire moved) and the sentences the canvas shows."""
from tfstudio.graph import Connect, Disconnect, Document, Edge
from tfstudio.gui.wire_rules import (both_ends_line, fits, loose_wire_prompt, no_port_line,
                                     port, replaced_line, Wiring, wiring)
from tfstudio.presets import load_preset


def test_a_wire_fits_the_other_side_of_another_block_that_takes_what_it_carries():
    gpt = load_preset("tiny-gpt")
    ids = port(gpt, "tokens", "ids", is_input=False)
    assert fits(ids, port(gpt, "embed", "ids", is_input=True))        # ids into ids
    assert not fits(ids, port(gpt, "head", "x", is_input=True))       # ids into hidden
    hidden = port(gpt, "final_norm", "y", is_input=False)
    assert fits(hidden, port(gpt, "head", "x", is_input=True))        # the kind decides
    assert not fits(hidden, port(gpt, "embed", "y", is_input=False))  # output to output
    assert not fits(hidden, port(gpt, "final_norm", "x", is_input=True))  # its own input
    head_in = port(gpt, "head", "x", is_input=True)                   # dragged from an input
    assert fits(head_in, hidden) and not fits(head_in, ids)


def test_a_wire_into_an_occupied_input_replaces_it_names_it_and_undoes_in_one_step():
    doc = Document(load_preset("tiny-gpt"))
    edge = Edge("embed", "y", "final_norm", "x")
    ruled = wiring(doc.root, (), edge)
    assert ruled.replaced == Edge("layers", "y", "final_norm", "x")
    assert ruled.edit.text == "Replace a wire"
    assert replaced_line(ruled.replaced, edge) == (
        "Replaced the wire from layers into final_norm's input 'x' (Undo puts it back)")
    doc.execute(ruled.edit)
    assert doc.root.edge_into("final_norm", "x") == edge
    assert doc.undo() and not doc.undo()
    assert doc.root.edge_into("final_norm", "x") == Edge("layers", "y", "final_norm", "x")
    # into a free input: a plain connection, nothing replaced
    doc.execute(Disconnect((), Edge("layers", "y", "final_norm", "x")))
    free = wiring(doc.root, (), edge)
    assert free.replaced is None and free.edit.text == "Connect"


def test_a_wire_picked_up_from_its_input_moves_in_one_step_or_stays_when_put_back():
    doc = Document(load_preset("tiny-gpt"))
    held = Edge("layers", "y", "final_norm", "x")
    moved = Edge("layers", "y", "head", "x")
    ruled = wiring(doc.root, (), moved, detached=held)
    assert ruled.edit.text == "Reconnect" and ruled.replaced is None
    doc.execute(ruled.edit)
    assert moved in doc.root.edges and held not in doc.root.edges
    assert doc.undo() and held in doc.root.edges and moved not in doc.root.edges
    assert wiring(doc.root, (), held, detached=held) is None   # put back: no edit


def test_the_canvas_sentences_name_the_side_and_the_kind():
    assert both_ends_line(True).startswith("Both ends are inputs:")
    assert both_ends_line(False).startswith("Both ends are outputs:")
    assert loose_wire_prompt("hidden", from_output=True) == \
        "Add a block that takes hidden: type to search"
    assert loose_wire_prompt("ids", from_output=False) == \
        "Add a block that gives ids: type to search"
    assert no_port_line("Norm", "ids") == "Norm has no port that fits a wire carrying ids"


def test_the_line_after_wiring_names_the_replaced_wire_and_a_block_moved_for_the_label():
    edge = Edge("layers", "y", "final_norm", "x")
    replaced = Edge("pos", "y", "final_norm", "x")
    moved = "Moved final_norm a little clear of layers: room for the wire's shape label"
    assert Wiring(Connect((), edge)).done_line(edge) == ""
    assert Wiring(Connect((), edge), moved=moved).done_line(edge) == moved
    assert Wiring(Connect((), edge), replaced).done_line(edge) == replaced_line(replaced, edge)
    assert Wiring(Connect((), edge), replaced, moved).done_line(edge) == (
        f"{replaced_line(replaced, edge)}; {moved}")
