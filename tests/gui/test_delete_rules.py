"""What Delete removes, without a window (gui/delete_rules.py): the selected blocks and the
selected wires that do not go with them, in one undo step; a group's inputs and outputs blocks
stay, and the line says why. test_interaction presses Delete in the real window."""
from tfstudio.graph import Disconnect, Document, Edge, Macro, RemoveNodes
from tfstudio.gui.delete_rules import KEEPS_BOUNDARY, deletion
from tfstudio.presets import load_preset

INSIDE = ("layers",)


def test_a_selected_block_goes_with_its_wires_in_one_step_that_undoes():
    doc = Document(load_preset("tiny-gpt"))
    graph = doc.graph(())
    wire = Edge("final_norm", "y", "head", "x")
    edit, line = deletion(graph, (), ["head"], [wire])          # its own wire selected too
    assert isinstance(edit, RemoveNodes) and line == ""         # no separate Disconnect
    doc.execute(edit)
    assert "head" not in doc.graph(()) and wire not in doc.graph(()).edges
    doc.undo()
    assert "head" in doc.graph(()) and wire in doc.graph(()).edges


def test_a_wire_selected_with_a_block_elsewhere_is_removed_with_it_as_one_delete():
    graph = load_preset("tiny-gpt").node("layers").subgraph
    wire = Edge("attn", "y", "add_attn", "in2")
    edit, _ = deletion(graph, INSIDE, ["norm_ffn"], [wire])
    assert isinstance(edit, Macro) and edit.text == "Delete"
    assert [type(c) for c in edit.commands] == [Disconnect, RemoveNodes]
    only_wire, _ = deletion(graph, INSIDE, [], [wire])
    assert isinstance(only_wire, Disconnect) and only_wire.edge == wire


def test_a_groups_inputs_and_outputs_blocks_stay_and_the_line_says_how_to_dissolve_it():
    graph = load_preset("tiny-gpt").node("layers").subgraph
    edit, line = deletion(graph, INSIDE, ["inputs", "ffn", "outputs"], [])
    assert isinstance(edit, RemoveNodes) and edit.node_ids == ["ffn"]
    assert line == KEEPS_BOUNDARY and "ungroup" in line
    nothing, line = deletion(graph, INSIDE, ["outputs"], [])
    assert nothing is None and line == KEEPS_BOUNDARY            # nothing left to delete
    assert deletion(graph, INSIDE, [], []) == (None, "")
