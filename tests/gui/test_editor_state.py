"""The editor window's commands, layer target, title and counts line, what Enter group, Ungroup
and --open-group take, the level the canvas falls back to, what the inspector shows, the
window's first size and the shortcut list's names (gui/editor_state.py), checked on preset
graphs and a plain Document without a QApplication."""
from tfstudio.graph import Document, RemoveNodes, SetParam, SetTitle, ShowRunGraph, dumps
from tfstudio.gui.editor_state import (DEFAULT_SIZE, ENTER_REFUSAL, UNGROUP_REFUSAL, commands,
                                      copied_line, counts_text, crumbs, deepest_path,
                                      default_size, group_to_enter, group_to_ungroup,
                                      history_line, inspected_blocks, layer_target,
                                      open_group_refusal, shortcut_name, window_title)
from tfstudio.gui.graph_report import report_on_graph
from tfstudio.presets import load_preset


def test_undo_and_redo_are_enabled_and_named_by_the_step_they_take():
    doc = Document(load_preset("tiny-gpt"))
    root = doc.graph(())
    fresh = commands(doc, root, (), [], False, "")
    assert not fresh.undo and not fresh.redo and fresh.undo_text == "&Undo"
    assert doc.execute(SetTitle((), "head", "Output"))
    edited = commands(doc, doc.graph(()), (), [], False, "")
    assert edited.undo and not edited.redo
    assert edited.undo_text == f"&Undo {doc.undo_text}" and doc.undo_text
    doc.undo()
    undone = commands(doc, doc.graph(()), (), [], False, "")
    assert not undone.undo and undone.redo and undone.redo_text == f"&Redo {doc.redo_text}"


def test_block_commands_follow_the_selection_and_the_level():
    doc = Document(load_preset("tiny-gpt"))
    root = doc.graph(())
    none = commands(doc, root, (), [], False, "")
    assert not (none.on_blocks or none.delete or none.ungroup or none.enter_group or none.up)
    wire = commands(doc, root, (), [], True, "")  # a wire alone: delete, nothing else
    assert wire.delete and not wire.on_blocks
    block = commands(doc, root, (), ["embed"], True, "")
    assert block.on_blocks and block.delete and not block.ungroup and not block.enter_group
    group = commands(doc, root, (), ["layers"], True, "")
    assert group.ungroup and group.enter_group
    both = commands(doc, root, (), ["layers", "embed"], True, "")
    assert both.ungroup and not both.enter_group  # enter needs one group alone
    inside = commands(doc, doc.graph(("layers",)), ("layers",), [], False, "")
    assert inside.up and not none.up


def test_paste_is_enabled_only_by_graph_text_on_the_clipboard():
    doc = Document(load_preset("tiny-gpt"))
    root = doc.graph(())
    assert commands(doc, root, (), [], False, dumps(root)).paste
    assert not commands(doc, root, (), [], False, "hello").paste


def test_the_layer_target_is_the_selected_group_the_open_one_or_the_only_one():
    gpt = load_preset("tiny-gpt")
    assert layer_target(gpt, gpt, (), []) == ((), "layers")  # the only layer group
    assert layer_target(gpt, gpt.node("layers").subgraph, ("layers",), ["attn"]) == \
        ((), "layers")                                       # edited inside
    t5 = load_preset("tiny-t5")
    assert layer_target(t5, t5, (), []) is None             # two groups, none chosen
    assert layer_target(t5, t5, (), ["decoder"]) == ((), "decoder")
    assert layer_target(t5, t5, (), ["encoder", "decoder"]) is None


def test_the_title_names_the_run_whose_graph_is_shown():
    doc = Document(load_preset("tiny-gpt"))
    assert window_title("tiny-gpt.json", doc.last_edit) == \
        "tiny-gpt.json[*] — tfstudio"
    assert doc.execute(ShowRunGraph((), load_preset("tiny-gpt"), run="run-7"))
    assert window_title("tiny-gpt", doc.last_edit) == \
        "tiny-gpt[*] — graph of run run-7 — tfstudio"
    assert doc.execute(SetParam(("layers",), "attn", "heads", 2))
    assert "run-7" not in window_title("tiny-gpt", doc.last_edit)  # an edit since: own graph


def test_the_counts_line_says_the_count_or_why_there_is_none():
    graph = load_preset("tiny-gpt")
    good = counts_text(report_on_graph(graph))
    assert good == "132.9k trainable params  ·  0 errors, 0 warnings"
    graph.node("layers").subgraph.node("attn").params["heads"] = 3  # 64 / 3 is not whole
    bad = counts_text(report_on_graph(graph))
    assert bad.startswith("params unavailable: ") and bad.endswith("2 errors, 0 warnings")


def test_the_breadcrumb_names_the_model_then_each_group_with_its_copies():
    gpt = load_preset("tiny-gpt")
    assert crumbs(gpt, ()) == [("tiny-gpt", ())]
    assert crumbs(gpt, ("layers",)) == [("tiny-gpt", ()), ("decoder layer ×2", ("layers",))]
    gpt.node("layers").params["repeat"] = 1
    assert crumbs(gpt, ("layers",))[1][0] == "decoder layer"      # one copy: its name alone
    gpt.node("layers").title = "z" * 300                          # a user's long title
    assert crumbs(gpt, ("layers",))[1][0] == "z" * 32 + "…" + "z" * 15   # 48 characters
    gpt.meta["name"] = "x" * 5_000 + "\n" + "y" * 5_000
    name = crumbs(gpt, ())[0][0]
    assert len(name) <= 48 and "\n" not in name and "…" in name
    del gpt.meta["name"]
    assert crumbs(gpt, ())[0][0] == "model"


def test_the_status_line_after_undo_and_redo_names_the_step_or_that_there_was_none():
    doc = Document(load_preset("tiny-gpt"))
    assert doc.execute(SetTitle((), "head", "Output"))
    step = doc.undo_text
    assert history_line(True, step, doc.undo()) == f"Undid: {step}"
    assert history_line(True, doc.undo_text, doc.undo()) == "Nothing to undo"
    assert history_line(False, doc.redo_text, doc.redo()) == f"Redid: {step}"
    assert history_line(False, doc.redo_text, doc.redo()) == "Nothing to redo"


def test_the_copied_line_counts_the_blocks():
    assert copied_line(1) == "Copied 1 block"
    assert copied_line(3) == "Copied 3 blocks"


def test_enter_group_opens_one_layer_group_selected_alone_and_nothing_else():
    root = load_preset("tiny-gpt")
    assert group_to_enter(root, ["layers"]) == "layers"
    assert group_to_enter(root, ["layers", "head"]) is None      # with another block
    assert group_to_enter(root, ["head"]) is None                # not a group
    assert group_to_enter(root, []) is None
    assert commands(Document(root), root, (), ["layers"], True, "").enter_group
    assert not commands(Document(root), root, (), ["layers", "head"], True, "").enter_group
    assert ENTER_REFUSAL == "Select one layer group to enter it"


def test_ungroup_dissolves_the_one_group_among_the_selected_blocks():
    root = load_preset("tiny-t5")
    groups = [n.id for n in root if n.is_group]
    assert len(groups) >= 2
    assert group_to_ungroup(root, [groups[0], "head"]) == groups[0]    # other blocks may come
    assert group_to_ungroup(root, groups[:2]) is None                  # two: which one?
    assert group_to_ungroup(root, ["head"]) is None
    assert UNGROUP_REFUSAL == "Select one group to ungroup"
    # the menu offers Ungroup exactly when it would dissolve one (two groups: disabled, not refused)
    assert commands(Document(root), root, (), [groups[0], "head"], True, "").ungroup
    assert not commands(Document(root), root, (), groups[:2], True, "").ungroup


def test_the_canvas_falls_back_to_the_deepest_level_that_still_exists():
    doc = Document(load_preset("tiny-gpt"))
    assert deepest_path(doc, ("layers",)) == ("layers",)
    assert deepest_path(doc, ("layers", "attn")) == ("layers",)      # attn holds no level
    doc.execute(RemoveNodes((), ["layers"]))
    assert deepest_path(doc, ("layers",)) == ()                       # the group is gone
    doc.undo()
    assert deepest_path(doc, ("layers",)) == ("layers",)


def test_the_window_opens_at_its_size_or_the_whole_of_a_smaller_screen():
    assert default_size((1920, 1050)) == DEFAULT_SIZE == (1500, 940)
    assert default_size((1366, 738)) == (1366, 738)                  # a laptop: all of it
    assert default_size((1280, 1000)) == (1280, 940)                 # each side on its own
    assert default_size(None) == DEFAULT_SIZE                        # no screen known


def test_the_shortcut_list_names_a_command_by_its_steady_name_without_menu_marks():
    assert shortcut_name("&Undo", own=True) == "Undo"
    assert shortcut_name("Generated &PyTorch code…", own=True) == "Generated PyTorch code"
    assert shortcut_name("Zoom &in", own=True) == "Zoom in"
    tip = "Build workspace (Ctrl+1) — edit the graph."
    assert shortcut_name(tip, own=False) == "Build workspace"        # a window action's tooltip
    assert shortcut_name("Train — watch it learn.", own=False) == "Train"
    assert shortcut_name(tip, own=True) == "Build workspace (Ctrl+1) — edit the graph"


def test_the_inspector_shows_a_block_clicked_inside_a_frame_not_the_layer_holding_it():
    assert inspected_blocks((), ["layers"], ("layers", "attn")) == (("layers",), ["attn"])
    assert inspected_blocks((), ["layers"], None) == ((), ["layers"])         # the layer itself
    assert inspected_blocks(("enc",), ["a", "b"], None) == (("enc",), ["a", "b"])
    assert inspected_blocks(("enc",), ["layers"], ("layers", "ffn")) == (("enc", "layers"),
                                                                        ["ffn"])


def test_open_group_opens_a_top_level_group_and_refuses_anything_else_naming_the_groups():
    t5 = load_preset("tiny-t5")
    assert open_group_refusal(t5, "decoder") is None
    assert open_group_refusal(t5, "nope") == ("--open-group: no group 'nope' at the top level; "
                                              "groups here: encoder, decoder")
    assert open_group_refusal(t5, "head").startswith("--open-group: no group 'head'")  # a block
    flat = load_preset("tiny-lstm")
    assert not any(n.is_group for n in flat)
    assert open_group_refusal(flat, "layers").endswith("groups here: none")


def test_a_chevron_closes_its_group_by_path_and_a_second_click_opens_it():
    from tfstudio.gui.editor_state import group_is_open, toggled_group
    closed = set()
    assert group_is_open(closed, (), "layers")
    closed = toggled_group(closed, (), "layers")
    assert not group_is_open(closed, (), "layers")
    assert group_is_open(closed, ("encoder",), "layers")   # the same id elsewhere stays open
    assert group_is_open(closed, (), "decoder")
    closed = toggled_group(closed, ("encoder",), "layers")
    assert not group_is_open(closed, ("encoder",), "layers")
    closed = toggled_group(closed, (), "layers")
    assert group_is_open(closed, (), "layers") and not group_is_open(closed, ("encoder",), "layers")



def test_a_right_click_selects_nothing_on_the_canvas_only_an_unselected_block_or_keeps_all():
    from tfstudio.gui.editor_state import context_selection
    assert context_selection(True, None, False) == []              # the empty canvas
    assert context_selection(False, "head", False) == ["head"]     # a block not selected
    assert context_selection(False, "embed", True) is None         # one of the selection: kept
    assert context_selection(False, None, False) is None           # a wire: kept


def test_a_click_on_a_small_block_selects_it_elsewhere_clears_and_a_modifier_leaves_it():
    from tfstudio.gui.editor_state import inner_click
    assert inner_click(False, "attn", None) == ("select", "attn")
    assert inner_click(False, "ffn", "attn") == ("select", "ffn")
    assert inner_click(False, None, "attn") == ("clear", None)     # the frame, not a block
    assert inner_click(False, None, None) is None                   # nothing to clear
    assert inner_click(True, "attn", None) is None                  # Shift/Ctrl: the selection's
    assert inner_click(True, None, "attn") is None


def test_a_double_click_enters_a_group_with_the_small_block_under_it_selected():
    from tfstudio.gui.editor_state import double_click_enters
    assert double_click_enters(True, "attn") == ("attn",)
    assert double_click_enters(True, None) == ()            # on the header: entered, none
    assert double_click_enters(False, None) is None          # a plain block is not entered


def test_an_edit_reaches_the_canvas_at_its_level_through_a_group_or_from_above_only():
    from tfstudio.gui.editor_state import event_reach
    assert event_reach((), ()) == ("here", None)
    assert event_reach(("layers",), ()) == ("inside", "layers")
    assert event_reach(("layers", "moe"), ()) == ("inside", "layers")       # however deep
    assert event_reach(("layers", "moe"), ("layers",)) == ("inside", "moe")
    assert event_reach(("layers",), ("layers",)) == ("here", None)
    assert event_reach((), ("layers", "moe")) == ("above", None)
    assert event_reach(("layers",), ("layers", "moe")) == ("above", None)
    assert event_reach(("decoder",), ("encoder",)) is None                 # another group
    assert event_reach(("encoder", "attn"), ("encoder", "ffn")) is None
    assert event_reach(("decoder", "attn"), ("encoder",)) is None          # deeper, elsewhere
