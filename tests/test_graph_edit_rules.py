"""Edit rules decided in graph/ (no widget): a head change keeps the kind the user chose, and
brings GQA back after a head count that could not be grouped took it away."""
from __future__ import annotations

from tfstudio.graph import Document
from tfstudio.graph.edit_rules import heads_edit, remembered_group, set_param_edit
from tfstudio.graph.switches import attention_kind, set_attention_kind
from tfstudio.presets import load_preset

LAYER = ("layers",)


def _llama() -> Document:
    return Document(load_preset("tiny-llama"))


def _heads(doc: Document, value: int) -> str:
    ruled = heads_edit(doc.graph(LAYER), LAYER, "attn", value)
    doc.execute(ruled.edit)
    return ruled.message


def _attn(doc: Document) -> tuple[int, int]:
    node = doc.graph(LAYER).node("attn")
    return int(node.param("heads")), int(node.param("kv_heads"))


def test_heads_five_makes_gqa_into_mqa_and_four_restores_gqa_four_two():
    doc = _llama()
    assert _attn(doc) == (4, 2)
    message = _heads(doc, 5)
    assert _attn(doc) == (5, 1)
    assert "GQA became MQA" in message and "5 heads cannot be grouped" in message
    message = _heads(doc, 4)
    assert _attn(doc) == (4, 2)
    assert "MQA became GQA again (2 heads per K/V head)" in message
    # the round trip again: a message each time the kind changes
    assert "GQA became MQA" in _heads(doc, 7)
    assert "MQA became GQA again" in _heads(doc, 8)
    assert _attn(doc) == (8, 4)  # the group size chosen (2) where it divides


def test_the_restored_grouping_is_the_one_nearest_the_group_size_chosen():
    doc = _llama()
    doc.execute(set_param_edit(doc.graph(LAYER), LAYER, "attn", "heads", 12).edit)
    doc.execute(set_param_edit(doc.graph(LAYER), LAYER, "attn", "kv_heads", 3).edit)
    assert _attn(doc) == (12, 3)  # 4 heads per K/V head
    _heads(doc, 7)
    assert remembered_group(doc.graph(LAYER), "attn") == 4
    _heads(doc, 6)  # 6 heads: groups of 2 (kv 3) or 3 (kv 2); 3 is nearer 4
    assert _attn(doc) == (6, 2)
    assert remembered_group(doc.graph(LAYER), "attn") is None


def test_undo_takes_back_the_heads_and_the_memory_in_one_step():
    doc = _llama()
    _heads(doc, 5)
    assert doc.undo_text == "Set heads to 5"
    doc.undo()
    assert _attn(doc) == (4, 2)
    assert remembered_group(doc.graph(LAYER), "attn") is None
    doc.redo()
    assert remembered_group(doc.graph(LAYER), "attn") == 2


def test_mqa_chosen_by_hand_or_by_the_switch_is_kept():
    doc = _llama()
    _heads(doc, 5)
    doc.execute(set_param_edit(doc.graph(LAYER), LAYER, "attn", "kv_heads", 1).edit)
    assert remembered_group(doc.graph(LAYER), "attn") is None  # K/V heads set: the user's kind
    assert _heads(doc, 4) == ""
    assert _attn(doc) == (4, 1)
    doc = _llama()
    _heads(doc, 5)
    layer = set_attention_kind(doc.graph(LAYER), "mqa")
    assert remembered_group(layer, "attn") is None
    assert attention_kind(layer) == "mqa"


def test_mha_and_gqa_that_divide_say_what_they_stay():
    doc = Document(load_preset("tiny-gpt"))
    assert _heads(doc, 8) == "K/V heads 4 → 8 (still MHA)"
    assert _heads(doc, 8) == ""  # no change, no sentence


def _problem(graph, code):
    from tfstudio.graph import validate
    return next(d for d in validate(graph) if d.code == code)


def test_a_problem_with_one_obvious_fix_is_fixed_in_one_undo_step():
    from tfstudio.graph import validate
    from tfstudio.graph.edit_rules import fix_edit, fix_text
    doc = Document(load_preset("tiny-gpt"))
    doc.execute(set_param_edit(doc.graph(LAYER), LAYER, "attn", "heads", 3).edit)
    problem = _problem(doc.root, "heads_divide_d_model")     # 64 / 3
    assert problem.fix == ("heads", 4)                        # nearest divisor, the larger on a tie
    assert fix_text(problem) == "Set heads to 4"
    doc.execute(fix_edit(doc.root, problem).edit)
    assert _attn(doc) == (4, 4)                               # MHA kept through the rule
    assert not [d for d in validate(doc.root) if d.severity == "error"]
    doc.undo()
    assert _attn(doc) == (3, 3)


def test_each_fixable_rule_names_a_fix_that_clears_it():
    from tfstudio.graph import validate
    from tfstudio.graph.edit_rules import fix_edit
    cases = [("kv_heads_divide_heads", "kv_heads", 3), ("heads_divide_d_model", "heads", 5)]
    for code, name, value in cases:
        doc = Document(load_preset("tiny-llama"))
        doc.execute(set_param_edit(doc.graph(LAYER), LAYER, "attn", name, value).edit)
        problem = _problem(doc.root, code)
        doc.execute(fix_edit(doc.root, problem).edit)
        assert code not in {d.code for d in validate(doc.root)}, code
    doc = Document(load_preset("tiny-gpt"))
    doc.execute(set_param_edit(doc.graph(LAYER), LAYER, "attn", "causal", False).edit)
    problem = _problem(doc.root, "decoder_not_causal")
    assert fix_edit(doc.root, problem) is not None
    doc.execute(fix_edit(doc.root, problem).edit)
    assert "decoder_not_causal" not in {d.code for d in validate(doc.root)}


def test_top_k_over_the_experts_is_fixed_by_setting_top_k_to_the_experts():
    from tfstudio.graph import validate
    from tfstudio.graph.edit_rules import fix_edit, fix_text
    for experts, top_k in ((4, 6), (3, 5)):
        doc = Document(load_preset("tiny-mixtral"))
        doc.execute(set_param_edit(doc.graph(LAYER), LAYER, "moe", "experts", experts).edit)
        doc.execute(set_param_edit(doc.graph(LAYER), LAYER, "moe", "top_k", top_k).edit)
        problem = _problem(doc.root, "top_k_exceeds_experts")
        assert fix_text(problem) == f"Set top k to {experts}"
        doc.execute(fix_edit(doc.root, problem).edit)
        assert doc.graph(LAYER).node("moe").param("top_k") == experts
        assert "top_k_exceeds_experts" not in {d.code for d in validate(doc.root)}
        doc.undo()                                            # one undo step
        assert doc.graph(LAYER).node("moe").param("top_k") == top_k


def _drawn(name: str):
    from tfstudio.graph.layout import untangled
    return untangled(load_preset(name))  # as the editor opens it (open frames need room)


def test_a_move_onto_another_block_snaps_to_the_nearest_free_spot():
    from tfstudio.graph.edit_rules import move_edit
    from tfstudio.graph.layout import block_rects, overlapping_pairs
    doc = Document(_drawn("tiny-gpt"))
    root = doc.root
    target = root.node("final_norm").pos
    ruled = move_edit(root, (), {"pos": target})              # right on top of the Norm
    doc.execute(ruled.edit)
    assert overlapping_pairs(doc.root) == []
    assert "nearest free spot" in ruled.message
    x, y, _, _ = block_rects(doc.root)["pos"]
    tx, ty, tw, th = block_rects(_drawn("tiny-gpt"))["final_norm"]
    # beside the Norm, not thrown far away: within a block's size of where it was dropped
    assert abs(x - tx) <= tw + 60 and abs(y - ty) <= th + 60
    # a move to a free spot is kept as it is
    far = (target[0], target[1] + 2000.0)
    ruled = move_edit(doc.root, (), {"pos": far})
    assert ruled.edit.positions["pos"] == far and ruled.message == ""


def test_a_move_of_several_blocks_keeps_them_together_and_clear():
    from tfstudio.graph.edit_rules import move_edit
    from tfstudio.graph.layout import overlapping_pairs
    doc = Document(_drawn("tiny-gpt"))
    root = doc.root
    dx, dy = (root.node("head").pos[0] - root.node("tokens").pos[0],
              root.node("head").pos[1] - root.node("tokens").pos[1])
    moved = {nid: (root.node(nid).pos[0] + dx, root.node(nid).pos[1] + dy)
             for nid in ("tokens", "embed")}
    ruled = move_edit(root, (), moved)
    doc.execute(ruled.edit)
    assert overlapping_pairs(doc.root) == []
    new = ruled.edit.positions
    assert (new["embed"][0] - new["tokens"][0], new["embed"][1] - new["tokens"][1]) == (
        moved["embed"][0] - moved["tokens"][0], moved["embed"][1] - moved["tokens"][1])


# ---------------------------------------------------------------- a drop on a wire, in line
def _before(a, b) -> bool:
    """Block rectangle ``a`` reads before ``b``: left of it on a shared row, or in a band
    above it."""
    same_row = a[1] < b[1] + b[3] and b[1] < a[1] + a[3]
    return (same_row and a[0] + a[2] <= b[0]) or a[1] + a[3] <= b[1]


def _splice_in_line(doc: Document, block: str, src: str, dst: str):
    from tfstudio.graph import new_node
    from tfstudio.graph.edit_rules import splice_in_line_edit
    graph = doc.root
    edge = next(e for e in graph.edges if (e.src, e.dst) == (src, dst))
    node = new_node(graph, block, (900.0, 900.0))          # dropped far from the wire
    ruled = splice_in_line_edit(graph, (), node, edge)
    doc.execute(ruled.edit)
    return node.id, ruled


def test_a_block_dropped_on_a_top_level_wire_goes_in_line_the_rest_keeping_their_order():
    """The issue's case: tiny-gpt, Dropout onto Token embedding -> Positional encoding, then
    MoE onto pos -> layers. Each lands between the wire's ends in reading order (Dropout on
    the embeddings' row, Positional encoding moved along), the untouched blocks keep their
    order, and the drawing has no wire through a block, no shared run, no label on a block."""
    from tfstudio.graph.layout import (block_rects, draw_level, labels_on_blocks,
                                       overlapping_labels, overlapping_pairs, shared_runs,
                                       wires_through_blocks)
    doc = Document(_drawn("tiny-gpt"))
    for block, src, dst in (("dropout", "embed", "pos"), ("moe", "pos", "layers")):
        old = block_rects(doc.root)
        new, ruled = _splice_in_line(doc, block, src, dst)
        rects = block_rects(doc.root)
        assert _before(rects[src], rects[new]) and _before(rects[new], rects[dst]), block
        assert "moved along" in ruled.message
        for a in old:
            for b in old:
                if _before(old[a], old[b]):
                    assert not _before(rects[b], rects[a]), (block, a, b)
        drawing = draw_level(doc.root)
        assert overlapping_pairs(doc.root) == []
        assert wires_through_blocks(drawing) == [] and shared_runs(drawing) == []
        assert labels_on_blocks(drawing) == [] and overlapping_labels(drawing) == []
    rects = block_rects(doc.root)
    embed, dropout, pos = rects["embed"], rects["dropout1"], rects["pos"]
    assert embed[1] == dropout[1] == pos[1]                    # one row, in line
    doc.undo()
    doc.undo()                                                 # each splice one undo step
    assert block_rects(doc.root) == block_rects(_drawn("tiny-gpt"))


def test_on_a_row_arranged_by_hand_the_reader_and_the_rest_of_its_row_move_along():
    """A level whose blocks are not where the tidy layout puts them keeps its arrangement:
    the wire's reader and the blocks right of it on its row shift by the new block's width
    and a gap; the blocks on other rows stay."""
    from tfstudio.graph.layout import CANVAS_SCALE, GAP_X, NODE_WIDTH, is_tidy
    root = _drawn("tiny-gpt")
    root.node("head").pos = (root.node("head").pos[0] + 300.0, root.node("head").pos[1] + 40.0)
    assert not is_tidy(root)
    doc = Document(root)
    before = {n: v.pos for n, v in root.nodes.items()}
    new, _ = _splice_in_line(doc, "dropout", "embed", "pos")
    after = {n: v.pos for n, v in doc.root.nodes.items()}
    step = round((NODE_WIDTH + GAP_X) / CANVAS_SCALE, 2)
    assert after["pos"] == (round(before["pos"][0] + step, 2), before["pos"][1])
    assert after[new] == before["pos"]                          # in the reader's place
    assert all(after[n] == before[n] for n in ("tokens", "embed", "layers", "final_norm", "head"))
