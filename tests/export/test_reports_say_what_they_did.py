"""Export and import say what they did and refuse what does not fit: the report names the folder
written and how to call the exported model, a non-causal decoder is refused by name, a BERT's
differing head eps is said out loud, and an imported config's attention dropout is carried.
Written from survivors of the export mutation sample (issue 29)."""
from __future__ import annotations

import pytest

from tfstudio.export import ExportRefused, export_hf, export_pytorch, hf_plan
from tfstudio.export.families import HFConfig, graph_from_config
from tfstudio.graph.templates import transformer_lm
from tfstudio.presets import load_preset

SMALL = dict(description="", vocab=64, d_model=16, layers=1, heads=2, max_len=16)


def set_param(graph, block_type, **params):
    for _, node in graph.walk():
        if node.type == block_type:
            node.params.update(params)
    return graph


def test_a_decoder_whose_attention_sees_ahead_is_refused_by_name():
    graph = set_param(load_preset("tiny-llama"), "attention", causal=False)
    with pytest.raises(ExportRefused) as caught:
        hf_plan(graph)
    assert caught.value.node_ids == ["attn"]
    assert "attention is causal" in str(caught.value) and "turn causal on" in str(caught.value)


def test_the_hf_export_report_names_the_folder_it_wrote(tmp_path):
    out = tmp_path / "hf"
    report = export_hf(transformer_lm(name="m", d_ff=32, **SMALL), out)
    assert str(report).splitlines()[0] == f"export hf: {out} (GPT2LMHeadModel)"


def test_the_pytorch_export_says_how_to_call_the_model(tmp_path):
    report = export_pytorch(transformer_lm(name="m", d_ff=32, **SMALL), tmp_path / "pt")
    assert any("logits = model(ids)` (needs torch + safetensors only)" in line
               for line in report.done)


def test_a_bert_whose_head_norm_differs_is_exported_with_the_difference_said(tmp_path):
    graph = transformer_lm(name="b", d_ff=32, encoder=True, placement="post", embed_norm=True,
                           tie=False, **SMALL)
    set_param(graph, "mlm_head", eps=1e-6)    # the masked-LM head's own LayerNorm
    report = export_hf(graph, tmp_path / "bert")
    assert any("eps 1e-06" in note and "logits differ slightly" in note
               for note in report.approximations)


def test_an_imported_llama_config_carries_its_attention_dropout():
    cfg = HFConfig({"model_type": "llama", "vocab_size": 10, "hidden_size": 8,
                    "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 8,
                    "attention_dropout": 0.25})
    graph, _ = graph_from_config(cfg, "imported")
    dropouts = [node.params["dropout"] for _, node in graph.walk() if node.type == "attention"]
    assert dropouts == [0.25]
