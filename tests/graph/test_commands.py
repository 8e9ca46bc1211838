"""Edit commands on a Document: do / undo / redo, refusals with reasons, events, dirty state,
grouping and ungrouping."""
import pytest

import tfstudio  # noqa: F401  (registers the block schemas)
from tfstudio.graph import (AddNode, Connect, ConnectionRefused, Disconnect, Document, Edge,
                            Graph, GraphError, Macro, MoveNodes, Node, RemoveNodes, ReplaceGraph,
                            SetParam, SetTitle, group_edit, group_nodes, new_node,
                            ungroup_edit, ungroup_node)
from tfstudio.graph.templates import layer_graph
from tfstudio.graph.validate import validate
from tfstudio.presets import load_preset


def chain_doc():
    """tokens -> embed -> norm -> head, the smallest valid model."""
    g = Graph(meta={"context_length": 16})
    g.add_node(Node("tokens", "token_input"))
    g.add_node(Node("embed", "token_embedding", {"vocab_size": 32, "d_model": 8}))
    g.add_node(Node("norm", "norm"))
    g.add_node(Node("head", "lm_head", {"vocab_size": 32}))
    for e in (Edge("tokens", "ids", "embed", "ids"), Edge("embed", "y", "norm", "x"),
              Edge("norm", "y", "head", "x")):
        g.add_edge(e)
    doc = Document(g)
    events = []
    doc.subscribe(events.append)
    return doc, events


def kinds(events):
    return [e.kind for e in events]


def snapshot(doc):
    return doc.root.clone()


def check_undo_redo(doc, command):
    """Execute, undo, redo: the graph must return exactly (node and wire order included)."""
    before = snapshot(doc)
    doc.execute(command)
    after = snapshot(doc)
    assert after != before
    assert doc.undo()
    assert doc.root == before
    assert list(doc.root.nodes) == list(before.nodes)
    assert doc.redo()
    assert doc.root == after
    return after


def test_add_node_do_undo_redo_and_events():
    doc, events = chain_doc()
    node = new_node(doc.root, "dropout", (10, 20), dropout=0.2)
    assert node.id == "dropout1" and node.params == {"dropout": 0.2}
    check_undo_redo(doc, AddNode((), node))
    assert kinds(events) == ["node_added", "node_removed", "node_added"]
    assert events[0].node_id == "dropout1" and events[0].path == ()
    # the document keeps its own copy: editing the command's node does not leak in
    node.params["dropout"] = 0.5
    assert doc.root.node("dropout1").params["dropout"] == 0.2


def test_add_node_refuses_duplicate_and_bad_ids():
    doc, _ = chain_doc()
    with pytest.raises(GraphError, match="already exists"):
        doc.execute(AddNode((), Node("norm", "norm")))
    with pytest.raises(GraphError, match="not valid"):
        doc.execute(AddNode((), Node("2bad", "norm")))
    with pytest.raises(GraphError, match="unknown block type 'nope'"):
        doc.execute(AddNode((), Node("x", "nope")))
    assert not doc.can_undo  # refused commands never reach the stack


def test_new_node_coerces_and_rejects_params():
    g = Graph()
    assert new_node(g, "attention", heads="8").params == {"heads": 8}
    for bad in ("eight", "8.5", None, [8], True, float("inf")):
        with pytest.raises(ValueError, match="'heads'"):
            new_node(g, "attention", heads=bad)
    assert new_node(g, "attention", heads=8.0).params == {"heads": 8}
    assert new_node(g, "attention", causal="no").params == {"causal": False}
    with pytest.raises(ValueError, match="'causal' expects a bool"):
        new_node(g, "attention", causal="maybe")


def test_remove_nodes_restores_nodes_wires_and_their_order():
    doc, events = chain_doc()
    check_undo_redo(doc, RemoveNodes((), ["norm", "norm"]))  # a repeated id is removed once
    assert "norm" not in doc.root.nodes
    assert [str(e) for e in doc.root.edges] == ["tokens.ids -> embed.ids"]
    assert kinds(events)[:3] == ["edge_removed", "edge_removed", "node_removed"]
    with pytest.raises(GraphError, match="no node 'ghost'"):
        doc.execute(RemoveNodes((), ["head", "ghost"]))
    assert "head" in doc.root.nodes  # refused before touching anything


def test_connect_refusals_say_why():
    doc, _ = chain_doc()
    g = doc.root
    cases = [
        (Edge("norm", "y", "norm", "x"), "cannot feed itself"),
        (Edge("tokens", "ids", "norm", "x"), "gives ids but 'x' takes hidden"),
        (Edge("embed", "nope", "norm", "x"), "no output port 'nope'"),
        (Edge("embed", "y", "ghost", "x"), "no node 'ghost'"),
        (Edge("norm", "y", "embed", "ids"), "gives hidden but 'ids' takes ids"),
    ]
    for edge, reason in cases:
        with pytest.raises(ConnectionRefused, match=reason):
            doc.execute(Connect((), edge))
    with pytest.raises(ConnectionRefused, match="already has a wire from 'embed'"):
        doc.execute(Connect((), Edge("embed", "y", "norm", "x"), replace=False))
    g.add_node(Node("extra", "norm"))
    g.add_edge(Edge("norm", "y", "extra", "x"))
    with pytest.raises(ConnectionRefused, match="would make a cycle"):
        doc.execute(Connect((), Edge("extra", "y", "norm", "x")))
    assert not doc.can_undo


def test_connect_with_replace_swaps_the_wire_and_undo_restores_it():
    doc, events = chain_doc()
    doc.root.add_node(Node("drop", "dropout"))
    doc.root.add_edge(Edge("embed", "y", "drop", "x"))
    events.clear()
    after = check_undo_redo(doc, Connect((), Edge("drop", "y", "norm", "x")))
    assert after.edge_into("norm", "x").src == "drop"
    assert Edge("embed", "y", "norm", "x") not in after.edges
    assert kinds(events) == ["edge_removed", "edge_added",       # do
                             "edge_removed", "edge_added",       # undo
                             "edge_removed", "edge_added"]       # redo


def test_disconnect_do_undo_redo():
    doc, events = chain_doc()
    edge = Edge("embed", "y", "norm", "x")
    after = check_undo_redo(doc, Disconnect((), edge))
    assert edge not in after.edges
    assert kinds(events) == ["edge_removed", "edge_added", "edge_removed"]
    assert [e.edge for e in events] == [edge] * 3  # the canvas redraws the wire named
    with pytest.raises(GraphError, match="there is no wire"):
        doc.execute(Disconnect((), edge))


def test_set_param_coerces_undoes_and_refuses():
    doc, events = chain_doc()
    after = check_undo_redo(doc, SetParam((), "embed", "d_model", "16"))
    assert after.node("embed").params["d_model"] == 16
    # a parameter left at its default is removed again by undo, not written as the default
    check_undo_redo(doc, SetParam((), "norm", "kind", "rmsnorm"))
    doc.undo()
    assert "kind" not in doc.root.node("norm").params
    assert events[0].kind == "param_changed" and events[0].name == "d_model"
    for value, reason in (("big", "'d_model' expects a int"), (0, "at least 1"),
                          (2.5, "expects a int")):
        with pytest.raises(ValueError, match=reason):
            doc.execute(SetParam((), "embed", "d_model", value))
    with pytest.raises(ValueError, match="must be one of layernorm, rmsnorm"):
        doc.execute(SetParam((), "norm", "kind", "batchnorm"))
    with pytest.raises(GraphError, match="has no parameter 'width'"):
        doc.execute(SetParam((), "norm", "width", 3))


def test_set_title_and_move_nodes():
    doc, events = chain_doc()
    check_undo_redo(doc, SetTitle((), "norm", "final norm"))
    assert doc.root.node("norm").label == "final norm"
    after = check_undo_redo(doc, MoveNodes((), {"norm": (5, 6), "head": (7.5, 8)}))
    assert after.node("norm").pos == (5.0, 6.0) and after.node("head").pos == (7.5, 8.0)
    assert kinds(events).count("node_moved") == 6  # 2 nodes x (do, undo, redo)
    with pytest.raises(GraphError):
        doc.execute(MoveNodes((), {"ghost": (0, 0)}))


def test_macro_is_one_step_and_all_or_nothing():
    doc, _ = chain_doc()
    before = snapshot(doc)
    macro = Macro([AddNode((), Node("drop", "dropout")),
                   Connect((), Edge("embed", "y", "drop", "x")),
                   Connect((), Edge("drop", "y", "norm", "x"))], text="Insert dropout")
    doc.execute(macro)
    assert doc.undo_text == "Insert dropout"
    assert doc.root.edge_into("norm", "x").src == "drop"
    doc.undo()
    assert doc.root == before and not doc.can_undo
    doc.redo()
    assert doc.root.edge_into("norm", "x").src == "drop"
    doc.undo()
    # a failing step rolls back the steps before it and leaves the history alone
    bad = Macro([AddNode((), Node("drop", "dropout")),
                 Connect((), Edge("tokens", "ids", "drop", "x"))])
    with pytest.raises(ConnectionRefused):
        doc.execute(bad)
    assert doc.root == before
    assert doc.can_redo and doc.redo_text == "Insert dropout"


def test_replace_graph_at_root_and_inside_a_group():
    doc = Document(load_preset("tiny-gpt"))
    events = []
    doc.subscribe(events.append)
    new_layer = layer_graph([("attention", {"heads": 2}), ("feed_forward", {"d_ff": 32})], "post")
    check_undo_redo(doc, ReplaceGraph(("layers",), new_layer))
    assert doc.graph(("layers",)).node("attn").params["heads"] == 2
    assert events[0].kind == "graph_replaced" and events[0].path == ("layers",)
    with pytest.raises(GraphError, match="not a group"):
        doc.execute(ReplaceGraph(("head",), Graph()))
    check_undo_redo(doc, ReplaceGraph((), Graph()))


def test_dirty_tracking():
    doc, events = chain_doc()
    assert not doc.dirty and not doc.can_undo and not doc.can_redo
    doc.execute(SetParam((), "norm", "eps", 1e-6))
    assert doc.dirty
    doc.mark_clean()
    assert not doc.dirty
    doc.undo()
    assert doc.dirty
    doc.redo()
    assert not doc.dirty
    doc.undo()
    doc.execute(SetTitle((), "norm", "n"))  # the clean state can no longer be reached
    assert doc.dirty
    doc.undo()
    assert doc.dirty
    doc.reset(Graph())
    assert not doc.dirty and not doc.can_undo
    assert events[-1].kind == "graph_replaced"


def test_undo_and_redo_with_nothing_to_do():
    doc, _ = chain_doc()
    assert doc.undo() is False and doc.redo() is False
    assert doc.undo_text == "" and doc.redo_text == ""


# ----------------------------------------------------------------------- group / ungroup
def test_ungroup_of_repeat_three_expands_into_three_chained_copies():
    root = load_preset("tiny-gpt")
    root.node("layers").params["repeat"] = 3
    flat = ungroup_node(root, "layers")
    attns = sorted(n.id for n in flat if n.type == "attention")
    assert attns == ["attn", "attn_1", "attn_2"]
    assert "layers" not in flat.nodes
    # follow the stream from the embedding: three copies of (attention add, ffn add), chained
    stream, adds = "pos", []
    while True:
        nxt = [e for e in flat.out_edges(stream) if flat.node(e.dst).type == "add"]
        if not nxt:
            break
        stream = nxt[0].dst
        adds.append(stream)
    assert adds == ["add_attn", "add_ffn", "add_attn_1", "add_ffn_1", "add_attn_2", "add_ffn_2"]
    assert flat.edge_into("final_norm", "x").src == "add_ffn_2"
    assert validate(flat) == []
    # same parameters as the group: the cost model counted the inside times 3
    from tfstudio.graph.cost import estimate_cost
    assert estimate_cost(flat).total_params == estimate_cost(root).total_params


def test_group_and_ungroup_round_trip_the_wiring():
    root = load_preset("tiny-gpt")
    flat = ungroup_node(root, "layers")
    inner = [n.id for n in flat if n.id not in root.nodes]
    regrouped = group_nodes(flat, inner, group_id="layers", repeat=1)
    g = regrouped.node("layers")
    assert g.subgraph.node("inputs").params["ports"] == "x:hidden"
    assert g.subgraph.node("outputs").params["ports"] == "y:hidden"
    assert validate(regrouped) == []
    again = ungroup_node(regrouped, "layers")
    assert set(again.edges) == set(flat.edges)


def test_group_of_a_selection_with_a_memory_input():
    root = load_preset("tiny-t5")
    flat = ungroup_node(root, "decoder")
    first_copy = ["norm_attn", "attn", "add_attn", "norm_cross", "cross", "add_cross",
                  "norm_ffn", "ffn", "add_ffn"]
    grouped = group_nodes(flat, first_copy, group_id="block", title="decoder layer")
    block = grouped.node("block")
    assert block.title == "decoder layer"
    assert block.subgraph.node("inputs").params["ports"] == "x:hidden, memory:memory"
    # the stream that fed the decoder (tiny-t5's sinusoidal positions) feeds the new group
    assert grouped.edge_into("block", "x").src == root.edge_into("decoder", "x").src == "tgt_pos"
    assert grouped.edge_into("block", "memory").src == "encoder_norm"
    inner_cross = block.subgraph.edge_into("cross", "memory")
    assert (inner_cross.src, inner_cross.src_port) == ("inputs", "memory")
    assert grouped.edge_into("norm_attn_1", "x").src == "block"
    assert validate(grouped) == []


def test_group_commands_undo_and_redo():
    doc = Document(load_preset("tiny-gpt"))
    check_undo_redo(doc, group_edit(doc, (), ["final_norm", "head"], title="output"))
    group_id = next(n.id for n in doc.root if n.type == "group" and n.id != "layers")
    assert set(doc.root.node(group_id).subgraph.nodes) == {"final_norm", "head", "inputs",
                                                           "outputs"}
    check_undo_redo(doc, ungroup_edit(doc, (), "layers"))
    with pytest.raises(GraphError, match="select at least one block"):
        group_nodes(doc.root, [])
    with pytest.raises(GraphError, match="is not a group"):
        ungroup_node(doc.root, "embed")


def test_group_keeps_boundary_ids_unique():
    g = Graph()
    g.add_node(Node("inputs", "norm"))
    g.add_node(Node("outputs", "norm"))
    g.add_edge(Edge("inputs", "y", "outputs", "x"))
    grouped = group_nodes(g, ["inputs", "outputs"], group_id="grp")
    inside = grouped.node("grp").subgraph
    assert len(inside.nodes_of_type("group_input")) == 1
    assert {"inputs", "outputs"} <= set(inside.nodes)


def test_ungroup_chains_the_first_output_port_whatever_the_wire_order():
    """A group with two outputs whose wires were drawn second port first."""
    inside = Graph()
    inside.add_node(Node("inputs", "group_input", {"ports": "x:hidden"}))
    inside.add_node(Node("outputs", "group_output", {"ports": "y:hidden, side:hidden"}))
    inside.add_node(Node("n", "norm"))
    inside.add_node(Node("d", "dropout"))
    inside.add_edge(Edge("inputs", "x", "n", "x"))
    inside.add_edge(Edge("inputs", "x", "d", "x"))
    inside.add_edge(Edge("d", "y", "outputs", "side"))  # the second port is wired first
    inside.add_edge(Edge("n", "y", "outputs", "y"))
    root = Graph()
    root.add_node(Node("src", "norm"))
    root.add_node(Node("grp", "group", {"repeat": 2}, subgraph=inside))
    root.add_edge(Edge("src", "y", "grp", "x"))
    flat = ungroup_node(root, "grp")
    second_norm = next(n for n in flat.nodes if n.startswith("n_"))
    assert flat.edge_into(second_norm, "x").src == "n"  # copy 2 reads copy 1's first output


def test_events_are_typed_changes_that_still_compare_as_their_old_names():
    from tfstudio.graph import GraphChange
    doc, events = chain_doc()
    doc.execute(MoveNodes((), {"norm": (5.0, 5.0)}))
    doc.execute(SetParam((), "norm", "kind", "rmsnorm"))
    doc.execute(RemoveNodes((), ["head"]))
    assert [e.kind for e in events] == [GraphChange.NODE_MOVED, GraphChange.PARAM_CHANGED,
                                        GraphChange.EDGE_REMOVED, GraphChange.NODE_REMOVED]
    assert all(isinstance(e.kind, GraphChange) for e in events)
    assert events[0].kind == "node_moved"  # listeners written against the strings keep working


def test_ungroup_of_a_group_that_passes_its_input_straight_through():
    """A group whose output is wired to its own input gives its readers the group's source."""
    doc, _ = chain_doc()
    grouped = group_nodes(doc.root, ["norm"], group_id="g")
    inside = grouped.nodes["g"].subgraph
    inside.remove_node("norm")
    inside.add_edge(Edge("inputs", "x", "outputs", "y"))
    flat = ungroup_node(grouped, "g")
    assert "g" not in flat.nodes and "norm" not in flat.nodes
    assert Edge("embed", "y", "head", "x") in flat.edges
