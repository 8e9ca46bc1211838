"""Graph files: every preset survives graph -> JSON -> graph, and malformed files are refused
with a message that names the problem."""
import json

import pytest

import tfstudio  # noqa: F401
from tfstudio.graph import (FORMAT_VERSION, GraphFileError, dumps, graph_from_dict,
                            graph_to_dict, load_graph_file, loads, save_graph)
from tfstudio.presets import load_preset, preset_names


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_round_trips(name, tmp_path):
    graph = load_preset(name)
    assert loads(dumps(graph)) == graph
    path = tmp_path / f"{name}.json"
    save_graph(graph, path)
    assert load_graph_file(path) == graph
    assert not (tmp_path / f"{name}.json.tmp").exists()  # the atomic write cleaned up


def test_round_trip_keeps_titles_meta_positions_and_nested_groups():
    graph = load_preset("tiny-t5")
    graph.node("decoder").title = "my decoder"
    graph.node("decoder").subgraph.node("attn").pos = (12.345, -6.5)
    graph.meta["note"] = {"nested": [1, 2]}
    back = loads(dumps(graph))
    assert back.node("decoder").title == "my decoder"
    assert back.node("decoder").subgraph.node("attn").pos == (12.35, -6.5)
    assert back.meta["note"] == {"nested": [1, 2]}
    data = graph_to_dict(graph)
    assert data["format_version"] == FORMAT_VERSION
    encoder = next(n for n in data["nodes"] if n["id"] == "encoder")
    assert encoder["subgraph"]["nodes"][0]["type"] == "group_input"


def minimal() -> dict:
    return {"format_version": FORMAT_VERSION,
            "nodes": [{"id": "tokens", "type": "token_input", "params": {}},
                      {"id": "embed", "type": "token_embedding",
                       "params": {"vocab_size": 10, "d_model": 4}}],
            "edges": [["tokens", "ids", "embed", "ids"]]}


def test_minimal_file_loads():
    g = graph_from_dict(minimal())
    assert list(g.nodes) == ["tokens", "embed"] and len(g.edges) == 1
    data = minimal()
    del data["edges"]                     # a graph with no wires yet may leave them out
    g = graph_from_dict(data)
    assert list(g.nodes) == ["tokens", "embed"] and g.edges == []


def refuse(data, *fragments):
    with pytest.raises(GraphFileError) as info:
        graph_from_dict(data, "model.json")
    message = str(info.value)
    assert message.startswith("model.json")
    for fragment in fragments:
        assert fragment in message, message
    return message


def edit(**changes):
    data = minimal()
    data.update(changes)
    return data


def test_bad_json_names_line_and_column():
    with pytest.raises(GraphFileError, match=r"model.json: not valid JSON \(line 2, column 1"):
        loads('{"format_version": 1,\n}', "model.json")


def test_version_problems():
    data = minimal()
    del data["format_version"]
    refuse(data, "missing 'format_version'", "tfstudio graph file")
    refuse(edit(format_version=99), "format_version 99 is not supported", "reads version 1")
    refuse(edit(format_version=True), "format_version True is not supported")
    refuse(edit(format_version="1"), "format_version '1' is not supported")
    refuse([1, 2], "expected a JSON object")


def test_node_problems():
    nodes = minimal()["nodes"]
    refuse(edit(nodes={"a": 1}), "'nodes' must be a list")
    refuse(edit(nodes=[{"type": "norm"}]), "node #0", "needs an 'id' and a 'type'")
    refuse(edit(nodes=[{"id": "x", "type": "transformer_magic"}]),
           "node #0 ('x')", "unknown block type 'transformer_magic'", "Known types: add")
    refuse(edit(nodes=[nodes[0], {"id": "embed", "type": "token_embedding",
                                  "params": {"d_model": "wide"}}]),
           "node #1 ('embed')", "'d_model' expects a int; got 'wide'")
    refuse(edit(nodes=[{"id": "g", "type": "group_input", "params": {"ports": ["x"]}}]),
           "node #0 ('g')", "'ports' expects a str; got ['x']")
    refuse(edit(nodes=[{"id": "n", "type": "norm", "params": {"kind": "batchnorm"}}]),
           "'kind' must be one of layernorm, rmsnorm")
    refuse(edit(nodes=[{"id": "n", "type": "norm", "params": {"colour": 1}}]),
           "block 'norm' has no parameter 'colour'", "remove it")
    refuse(edit(nodes=[{"id": "n", "type": "norm", "params": [1]}]), "'params' must be an object")
    refuse(edit(nodes=[{"id": "n", "type": "norm", "pos": "here"}]), "'pos' must be [x, y]")
    refuse(edit(nodes=[nodes[0], nodes[0]]), "node #1", "already exists")
    refuse(edit(nodes=[{"id": "9lives", "type": "norm"}]), "node id '9lives' is not valid")


def test_subgraph_and_meta_problems():
    refuse(edit(meta=[1]), "'meta' must be an object")
    refuse(edit(nodes=[{"id": "n", "type": "norm", "subgraph": {"nodes": []}}]),
           "only a group has a 'subgraph'")
    refuse(edit(nodes=[{"id": "g", "type": "group", "subgraph": [1]}]),
           "'subgraph' must be an object")
    message = refuse(edit(nodes=[{"id": "g", "type": "group",
                                  "subgraph": {"nodes": [{"id": "x", "type": "bogus"}]}}]),
                     "unknown block type 'bogus'")
    assert "> g" in message  # says which group the bad node is in


def test_edge_problems():
    refuse(edit(edges={"a": 1}), "'edges' must be a list")
    refuse(edit(edges=[["tokens", "ids", "embed"]]), "edge #0 must be [src, src_port, dst, dst_port]")
    refuse(edit(edges=[["tokens", "ids", "embed", 3]]), "edge #0 must be")
    refuse(edit(edges=[["tokens", "ids", "ghost", "ids"]]), "edge #0", "no node 'ghost'")
    refuse(edit(edges=[["tokens", "ids", "embed", "ids"]] * 2), "edge #1", "already exists")


def test_unreadable_files(tmp_path):
    with pytest.raises(GraphFileError, match="cannot read the file"):
        load_graph_file(tmp_path / "missing.json")
    binary = tmp_path / "blob.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(GraphFileError, match="not UTF-8 text"):
        load_graph_file(binary)
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(minimal()))
    assert list(load_graph_file(ok).nodes) == ["tokens", "embed"]


def test_loading_executes_nothing(tmp_path):
    """A string parameter that looks like code stays a string."""
    data = minimal()
    data["nodes"].append({"id": "gi", "type": "group_input",
                          "params": {"ports": "__import__('os').system('false')"}})
    g = graph_from_dict(data)
    assert g.node("gi").params["ports"] == "__import__('os').system('false')"
