"""``tfstudio inspect``: text and JSON reports, exit codes for invalid and unreadable graphs."""
import json

import tfstudio  # noqa: F401
from tfstudio.cli import main
from tfstudio.graph import save_graph
from tfstudio.presets import load_preset


def test_text_report_of_a_preset(capsys):
    assert main(["inspect", "tiny-t5"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "tiny-t5"
    assert "Diagnostics: none" in out
    decoder = next(line for line in lines if line.startswith("decoder "))
    assert "group x 2" in decoder and "[B, T, 64]" in decoder
    # the inside of a group is indented under it
    assert any(line.startswith("  cross ") and "cross_attention" in line for line in lines)
    assert any(line.startswith("head ") and "[B, T, 256]" in line for line in lines)
    assert "Parameters          262,912" in out
    assert "FLOPs per token" in out and "KV cache per token  512 B in bfloat16" in out
    assert "Training memory" in out and "batch 8 x 64 tokens in float32" in out


def test_json_report_numbers(capsys):
    assert main(["inspect", "gpt2-small", "--json", "--batch", "2", "--seq-len", "128",
                 "--dtype", "bf16"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["valid"] is True and data["diagnostics"] == []
    assert data["total_params"] == 124_439_808
    assert data["kv_cache_bytes_per_token"] == 2 * 12 * 12 * 64 * 2
    memory = data["training_memory"]
    assert (memory["batch"], memory["seq_len"], memory["dtype"]) == (2, 128, "bf16")
    # weights stay fp32 under bf16 autocast, as the trainer keeps them (the pre-flight's rule)
    assert memory["weights"] == 124_439_808 * 4 and memory["optimizer"] == 124_439_808 * 8
    assert memory["total"] == sum(memory[k] for k in ("weights", "gradients", "optimizer",
                                                      "activations"))
    attn = next(n for n in data["nodes"] if n["id"] == "attn")
    assert attn["path"] == ["layers"] and attn["params"] == 4 * 768 * 768 + 4 * 768
    layers = next(n for n in data["nodes"] if n["id"] == "layers")
    assert layers["repeat"] == 12 and layers["outputs"] == {"y": ["B", "T", 768]}


def test_invalid_graph_exits_nonzero_with_diagnostics(tmp_path, capsys):
    graph = load_preset("tiny-gpt")
    graph.node("layers").subgraph.node("attn").params["heads"] = 6
    path = tmp_path / "broken.json"
    save_graph(graph, path)
    assert main(["inspect", str(path)]) == 1
    out = capsys.readouterr().out
    assert "ERROR [heads_divide_d_model] layers/attn" in out
    assert "fix: set heads to a divisor of 64" in out
    assert main(["inspect", str(path), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["valid"] is False
    assert data["diagnostics"][0]["code"] == "heads_divide_d_model"


def test_context_length_option_reaches_validation(capsys):
    assert main(["inspect", "tiny-gpt", "--context-length", "512"]) == 1
    assert "learned_positions_too_short" in capsys.readouterr().out


def test_unreadable_and_unknown_graphs(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["inspect", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "not valid JSON (line 1, column 2" in err
    assert main(["inspect", "no-such-preset"]) == 2
    assert "no preset named 'no-such-preset'" in capsys.readouterr().err
    assert main(["inspect", "tiny-gpt", "--dtype", "float13"]) == 2
    assert "unknown dtype 'float13'" in capsys.readouterr().err
    assert main(["inspect", "tiny-gpt", "--batch", "0"]) == 2
    assert "argument --batch: takes a whole number from 1" in capsys.readouterr().err


def test_inspect_and_the_pre_flight_give_one_estimate(capsys):
    """tiny-gpt at batch 512 x 256: inspect said 1.32 GiB of activations where the pre-flight
    counted 1.96 GB (issue 42); both now print the pre-flight's number."""
    from tfstudio.runs.preflight import training_need
    assert main(["inspect", "tiny-gpt", "--json", "--batch", "512", "--seq-len", "256"]) == 0
    memory = json.loads(capsys.readouterr().out)["training_memory"]
    need = training_need(load_preset("tiny-gpt"), batch=512, seq_len=256, precision="fp32")
    assert (memory["activations"], memory["total"]) == (need.activations, need.total)
