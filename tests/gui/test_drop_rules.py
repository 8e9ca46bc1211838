"""Where a dropped block lands, without a window (gui/drop_rules.py): whether it splices into
the wire under it, where it sits inside a group, what a new block and a new layer group
start as, and the status bar's sentence naming where it went."""
from tfstudio.graph import AddNode, Document, Edge, Node, kept_tidy
from tfstudio.graph.layout import NODE_WIDTH, block_rects, overlapping_pairs
from tfstudio.graph.templates import layer_graph, transformer_lm
from tfstudio.gui.canvas_units import SPREAD
from tfstudio.gui.drop_rules import (DropTarget, added_line, block_addition, fill_new_group,
                                     nearest_block, new_block, splices, spot_inside)
from tfstudio.presets import load_preset


def test_a_block_whose_ports_fit_the_wire_splices_and_one_that_does_not_goes_beside():
    gpt = load_preset("tiny-gpt")
    top = Edge("final_norm", "y", "head", "x")
    assert splices(gpt, "dropout", top) and splices(gpt, "norm", top)
    assert not splices(gpt, "token_input", top)       # gives ids, takes nothing
    residual = Edge("add_attn", "y", "add_ffn", "in1")
    assert splices(gpt.node("layers").subgraph, "dropout", residual)


def _distance(a, b) -> float:
    (ax, ay), (bx, by) = ((r[0] + r[2] / 2, r[1] + r[3] / 2) for r in (a, b))
    return ((ax - bx) ** 2 + (ay - by) ** 2) ** 0.5


def test_a_block_dropped_inside_a_group_sits_by_the_block_it_was_dropped_by():
    inside = load_preset("tiny-gpt").node("layers").subgraph
    for near in ("attn", "ffn"):
        node = new_block(inside, inside, "dropout", (0.0, 0.0))
        node.pos = spot_inside(inside, node, None, near)
        inside.add_node(node)
        rects = block_rects(inside)
        assert _distance(rects[node.id], rects[near]) < 2 * NODE_WIDTH, near
        assert not [p for p in overlapping_pairs(inside) if node.id in p], near
        inside.remove_node(node.id)
    # by the attention and by the feed-forward are different places
    by = [spot_inside(inside, Node("d", "dropout"), None, near) for near in ("attn", "ffn")]
    assert by[0] != by[1]


def test_a_block_spliced_inside_a_group_sits_between_the_wires_ends():
    inside = load_preset("tiny-gpt").node("layers").subgraph
    wire = Edge("attn", "y", "add_attn", "in1")
    spot = spot_inside(inside, Node("d", "dropout"), wire)
    (ax, _), (bx, _) = inside.node("attn").pos, inside.node("add_attn").pos
    aside = spot_inside(inside, Node("d", "dropout"), None)   # no wire, no block: under them
    assert spot != aside and abs(spot[0] - (ax + bx) / 2) < abs(aside[0] - (ax + bx) / 2)


def test_an_added_block_starts_like_the_models_blocks_of_its_kind():
    """A Norm added to LLaMA (every norm an RMSNorm without bias) is an RMSNorm without bias;
    added to GPT (LayerNorms with bias) it is a LayerNorm; where the model's blocks disagree
    (tiny-t5's encoder attends both ways, its decoder causally) the catalogue's default stays."""
    from tfstudio.graph.edits import get_spec

    def added(preset, block_type):
        root = load_preset(preset)
        return new_block(root, root, block_type, (0.0, 4000.0)).typed_params()

    llama, gpt = added("tiny-llama", "norm"), added("tiny-gpt", "norm")
    assert (llama.kind, llama.bias) == ("rmsnorm", False)
    assert (gpt.kind, gpt.bias) == ("layernorm", True)
    t5 = [n.typed_params().causal for _, n in load_preset("tiny-t5").walk()
          if n.type == "attention"]
    assert set(t5) == {True, False}
    assert added("tiny-t5", "attention").causal == get_spec("attention").param("causal").default
    assert added("tiny-llama", "attention").heads == next(
        n.typed_params().heads for _, n in load_preset("tiny-llama").walk()
        if n.type == "attention")


def test_a_new_layer_group_holds_one_standard_layer_and_a_block_nothing():
    gpt = load_preset("tiny-gpt")                     # its layer group repeats twice
    group = new_block(gpt, gpt, "group", (0.0, 3000.0))
    assert "repeat" not in group.params               # not the model's groups' two copies
    fill_new_group(group)
    assert group.params["repeat"] == 1                # written out: one copy
    assert {n.type for n in group.subgraph} >= {"attention", "feed_forward", "norm", "add"}
    norm = new_block(gpt, gpt, "norm", (0.0, 3000.0))
    fill_new_group(norm)
    assert norm.subgraph is None


def test_the_status_line_names_the_wire_the_group_its_copies_and_what_moved():
    gpt = load_preset("tiny-gpt")
    layers = gpt.node("layers")                       # decoder layer, 2 copies
    assert added_line("Dropout") == "Added Dropout"
    assert added_line("Dropout", Edge("embed", "y", "pos", "x")) == \
        "Inserted Dropout into the wire from embed to pos"
    assert added_line("Norm", group=layers) == \
        f"Added Norm inside {layers.label} (all 2 copies share it)"
    layers.params["repeat"] = 1
    assert added_line("Norm", group=layers) == f"Added Norm inside {layers.label}"
    assert added_line("Dropout", Edge("embed", "y", "pos", "x"), moved="pos moved along") \
        .endswith("from embed to pos; pos moved along")


def test_a_drop_in_a_frame_is_by_the_small_block_nearest_where_it_was_let_go():
    centres = [("norm_attn", (60.0, 40.0)), ("attn", (200.0, 40.0)), ("ffn", (200.0, 140.0))]
    assert nearest_block(centres, (70.0, 50.0)) == "norm_attn"
    assert nearest_block(centres, (190.0, 100.0)) == "ffn"               # 40 below vs 60 above
    assert nearest_block(centres, (190.0, 80.0)) == "attn"
    assert nearest_block(centres, (200.0, 90.0)) == "attn"               # equal: the first drawn
    assert nearest_block([], (0.0, 0.0)) is None                         # an empty frame


def _added(root, target: DropTarget, block_type: str, corner=(0.0, 3000.0 / SPREAD), near=None):
    """scene.add_block's edit run as the session runs it: the document and the addition."""
    doc = Document(root)
    added = block_addition(doc.root, target, block_type, corner, near)
    doc.execute(kept_tidy(added.edit))
    return doc, added


def test_a_new_layer_group_from_the_palette_holds_a_standard_layer():
    """Moved from test_feedback (scene.add_block("group") in a window): the palette's new
    group, added as block_addition rules; the window selects it (test_drop_where_you_aim)."""
    doc, added = _added(transformer_lm(name="t", description="", vocab=32, d_model=16,
                                       layers=1, heads=2, d_ff=32), DropTarget(()), "group")
    inside = doc.root.node(added.node.id).subgraph
    expected = layer_graph([("attention", {}), ("feed_forward", {})], "pre")
    assert sorted(inside.edges) == sorted(expected.edges)
    assert added.line == f"Added {added.node.label}" and isinstance(added.edit, AddNode)


def test_a_block_added_over_a_wire_that_fits_goes_into_it_and_one_that_does_not_beside():
    top = Edge("final_norm", "y", "head", "x")
    doc, added = _added(load_preset("tiny-gpt"), DropTarget((), top), "dropout")
    assert top not in doc.root.edges
    assert Edge("final_norm", "y", added.node.id, "x") in doc.root.edges
    assert added.line.startswith("Inserted Dropout into the wire from final_norm to head")
    doc, added = _added(load_preset("tiny-gpt"), DropTarget((), top), "token_input")
    assert top in doc.root.edges and isinstance(added.edit, AddNode)   # not into it
    assert added.line == f"Added {added.node.label}"
    assert not [p for p in overlapping_pairs(doc.root) if added.node.id in p]


def test_a_block_added_at_a_taken_spot_moves_clear_and_one_in_a_frame_goes_inside():
    gpt = load_preset("tiny-gpt")
    taken = gpt.node("embed").pos
    doc, added = _added(gpt, DropTarget(()), "dropout", taken)
    assert added.node.pos != taken                                      # moved clear
    assert not [p for p in overlapping_pairs(doc.root) if added.node.id in p]
    doc, added = _added(load_preset("tiny-gpt"), DropTarget(("layers",), None, "layers"),
                        "dropout", taken, near="ffn")
    inside = doc.root.node("layers").subgraph
    assert added.node.id in inside and added.node.id not in doc.root.nodes
    layers = doc.root.node("layers")
    assert added.line == f"Added Dropout inside {layers.label} (all 2 copies share it)"
    rects = block_rects(inside)
    assert _distance(rects[added.node.id], rects["ffn"]) < 2 * NODE_WIDTH   # by the ffn
