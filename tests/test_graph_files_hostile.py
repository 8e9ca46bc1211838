"""Hostile graph files: each one is refused with a GraphFileError naming the field and the limit
(never a Python exception), `tfstudio inspect` exits 2 with one line, the editor shows "cannot
open" and keeps its graph; and a graph at the nesting limit still loads and compiles."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import tfstudio  # noqa: F401
from tfstudio.cli import main
from tfstudio.graph import GraphFileError, estimate_cost, loads, validate
from tfstudio.graph.serialize import MAX_GROUP_DEPTH, MAX_JSON_DEPTH, MAX_SIZE
from tfstudio.presets import PRESET_DIR, load_preset

TINY_GPT = json.loads((PRESET_DIR / "tiny-gpt.json").read_text())


def tiny_gpt_with(change) -> str:
    doc = json.loads(json.dumps(TINY_GPT))
    change(doc)
    return json.dumps(doc)


def node(doc, node_id):
    return next(n for n in doc["nodes"] if n["id"] == node_id)


def nested_groups(depth: int, repeat: int = 1) -> str:
    """tiny-gpt with one decoder layer wrapped in ``depth - 1`` more groups, each passing its
    stream through, so the model is a one-layer tiny-gpt at any depth. Built as text: json
    itself cannot write 400 levels."""
    layer = dict(node(TINY_GPT, "layers"), params={"repeat": 1}, id="inner")
    text = json.dumps(layer)
    for level in range(depth - 1):
        gid = "layers" if level == depth - 2 else "inner"
        text = ('{"id": "%s", "type": "group", "params": {"repeat": %d}, "subgraph": {"nodes": ['
                '{"id": "inputs", "type": "group_input", "params": {"ports": "x:hidden"}}, %s, '
                '{"id": "outputs", "type": "group_output", "params": {"ports": "y:hidden"}}], '
                '"edges": [["inputs", "x", "inner", "x"], ["inner", "y", "outputs", "y"]]}}'
                % (gid, repeat, text))
    if depth == 1:
        text = text.replace('"id": "inner"', '"id": "layers"', 1)
    doc = dict(TINY_GPT, nodes=[n if n["id"] != "layers" else "@@" for n in TINY_GPT["nodes"]])
    return json.dumps(doc).replace('"@@"', text)


def set_param(node_id, name, value):
    return lambda doc: node(doc, node_id)["params"].__setitem__(name, value)


# name -> (file text, fragments the one-line refusal must contain)
HOSTILE = {
    "pos_object": (tiny_gpt_with(lambda d: node(d, "tokens").__setitem__("pos", {"x": 1})),
                   ["node #0 ('tokens')", "'pos' must be [x, y]"]),
    "pos_huge_int": (tiny_gpt_with(lambda d: node(d, "tokens").__setitem__("pos", [10 ** 400, 0])),
                     ["'pos' must be [x, y] with numbers within ±1,000,000,000"]),
    "d_model_1e300": (tiny_gpt_with(set_param("embed", "d_model", 10 ** 300)),
                      ["('embed')", "'d_model' is a 301-digit number", "2,147,483,647"]),
    "d_model_just_over": (tiny_gpt_with(set_param("embed", "d_model", MAX_SIZE + 1)),
                          ["'d_model' is 2147483648", "more than the 2,147,483,647"]),
    "float_param_huge_int": (tiny_gpt_with(set_param("final_norm", "eps", 10 ** 400)),
                             ["('final_norm')", "'eps' is a 401-digit number", "3.4e+38"]),
    "digits_5000": (tiny_gpt_with(set_param("embed", "d_model", 7)).replace(
        '"d_model": 7', '"d_model": ' + "9" * 5000),
                    ["('embed')", "'d_model' is a 5,000-digit number", "2,147,483,647"]),
    "nan_literal": (tiny_gpt_with(set_param("final_norm", "eps", 7)).replace(
        '"eps": 7', '"eps": NaN'), ["'eps' must be a finite number"]),
    "context_length_huge": (tiny_gpt_with(lambda d: d["meta"].__setitem__("context_length",
                                                                          10 ** 300)),
                            ["meta 'context_length' must be a whole number from 1 to "
                             "2,147,483,647", "301-digit number"]),
    "meta_note_5000_digits": (tiny_gpt_with(lambda d: d["meta"].__setitem__("note", [{"n": 7}]))
                              .replace('"n": 7', '"n": ' + "1" * 5000),
                              ["meta 'note' holds a number of more than 4,300 digits"]),
    "name_not_text": (tiny_gpt_with(lambda d: d["meta"].__setitem__("name", ["a", "b"])),
                      ["meta 'name' must be text"]),
    "title_not_text": (tiny_gpt_with(lambda d: node(d, "embed").__setitem__("title", {"a": 1})),
                       ["node #1", "'title' must be text"]),
    "lone_surrogate": (tiny_gpt_with(lambda d: d["meta"].__setitem__("name", "\ud800")),
                       ["half of a UTF-16 surrogate pair"]),
    "deep_json": ('{"format_version": 1, "nodes": [], "meta": {"x": ' + "[" * 100_000
                  + "]" * 100_000 + "}}",
                  [f"nested more than {MAX_JSON_DEPTH} levels deep"]),
    "groups_400": (nested_groups(400), [f"more than {MAX_JSON_DEPTH} levels deep",
                                        f"room for {MAX_GROUP_DEPTH} groups inside groups"]),
    "groups_over_limit": (nested_groups(MAX_GROUP_DEPTH + 1),
                          [f"groups are nested more than {MAX_GROUP_DEPTH} deep"]),
    "repeats_multiply_past_limit": (nested_groups(3, repeat=2 ** 16),
                                    ["repeats of the nested groups multiply to "
                                     "4,294,967,296 copies", "lower a 'repeat'"]),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_file_is_refused_naming_the_field(name):
    text, fragments = HOSTILE[name]
    with pytest.raises(GraphFileError) as info:
        loads(text, "hostile.json")
    message = str(info.value)
    assert message.startswith("hostile.json") and "\n" not in message
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_inspect_exits_2_with_one_line(name, tmp_path, capsys):
    path = tmp_path / f"{name}.json"
    path.write_text(HOSTILE[name][0])
    assert main(["inspect", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"tfstudio inspect: {path}") and captured.err.count("\n") == 1


def test_inspect_exit_codes_valid_and_invalid(tmp_path, capsys):
    assert main(["inspect", "tiny-gpt"]) == 0
    path = tmp_path / "heads.json"
    path.write_text(tiny_gpt_with(lambda d: node(d, "layers")["subgraph"]["nodes"][2]["params"]
                                  .__setitem__("heads", 5)))
    assert main(["inspect", str(path)]) == 1
    assert main(["inspect", "tiny-gpt", "--batch", str(10 ** 80)]) == 2
    assert "--batch: takes a whole number from 1 to 2,147,483,647" in capsys.readouterr().err


def test_sizes_at_the_limit_load_and_inspect_prints_their_costs(tmp_path, capsys):
    """The limit is chosen so the cost model's products stay finite: every size at the limit
    and a group repeated at the limit still give a text report (the graph is invalid: heads do
    not divide d_model, and validation says so)."""
    def at_limit(doc):
        node(doc, "embed")["params"].update(vocab_size=MAX_SIZE, d_model=MAX_SIZE)
        node(doc, "head")["params"]["vocab_size"] = MAX_SIZE
        node(doc, "layers")["params"]["repeat"] = MAX_SIZE
        doc["meta"]["context_length"] = MAX_SIZE
    path = tmp_path / "limit.json"
    path.write_text(tiny_gpt_with(at_limit))
    code = main(["inspect", str(path), "--batch", str(MAX_SIZE)])
    out = capsys.readouterr().out
    assert code in (0, 1) and "Parameters" in out and "Training memory" in out
    graph = loads(path.read_text())
    # the embedding alone: vocab x d_model, exactly
    assert estimate_cost(graph).total_params >= MAX_SIZE * MAX_SIZE


def test_groups_at_the_depth_limit_load_validate_and_compile():
    import torch

    from tfstudio.compiler import compile_graph

    deep = loads(nested_groups(MAX_GROUP_DEPTH))
    flat = loads(nested_groups(1))
    assert validate(deep) == []
    torch.manual_seed(0)
    deep_model = compile_graph(deep)
    torch.manual_seed(0)
    flat_model = compile_graph(flat)
    deep_params = [p for _, p in deep_model.named_parameters()]
    flat_params = [p for _, p in flat_model.named_parameters()]
    # the wrappers add nothing: same parameters, and with the same weights the same logits
    assert [p.shape for p in deep_params] == [p.shape for p in flat_params]
    with torch.no_grad():
        for d, f in zip(deep_params, flat_params):
            d.copy_(f)
        ids = torch.randint(0, 256, (2, 12))
        assert torch.allclose(deep_model(ids), flat_model(ids), atol=1e-6)


def test_the_editor_shows_cannot_open_and_keeps_its_graph(make_window, tmp_path):
    w = make_window(load_preset("tiny-gpt"))
    before = w.session.root.clone()
    for name, (text, fragments) in HOSTILE.items():
        path = tmp_path / f"{name}.json"
        path.write_text(text)
        assert not w.open_file(path), name
        assert fragments[0] in w.last_error, (name, w.last_error)
        assert w._error_box.windowTitle() == "Cannot open the graph"
        assert w.session.root == before


@pytest.mark.slow
def test_launching_with_a_hostile_file_shows_cannot_open_without_a_traceback(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text(HOSTILE["digits_5000"][0])
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", TFSTUDIO_DATA_DIR=str(tmp_path / "data"))
    result = subprocess.run([sys.executable, "-m", "tfstudio", str(path), "--startup-report"],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["file"] is None  # the editor opened on its default graph instead
    # the screenshot mode fails loudly with the same one line
    result = subprocess.run([sys.executable, "-m", "tfstudio", str(path), "--screenshot",
                             str(tmp_path / "x.png")], capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 2
    assert "'d_model' is a 5,000-digit number" in result.stderr
    assert "Traceback" not in result.stderr
