"""What the Costs panel says (gui/cost_lines.py), checked on preset graphs without a
QApplication: each verdict is fed the data on both sides of where it flips."""
from tfstudio.graph.cost import training_memory
from tfstudio.gui.cost_lines import (block_rows, fits, memory_view, model_lines, share_texts,
                                     unavailable_reason)
from tfstudio.gui.device_memory import DeviceMemory, system_ram, training_device
from tfstudio.gui.graph_report import report_on_graph
from tfstudio.gui.text import bytes_label
from tfstudio.presets import load_preset


def _broken_gpt():
    """tiny-gpt with 3 heads over d_model 64: an error."""
    graph = load_preset("tiny-gpt")
    graph.node("layers").subgraph.node("attn").params["heads"] = 3
    return graph


def test_the_memory_verdict_flips_where_the_step_outgrows_the_device():
    graph = load_preset("tiny-gpt")
    est = training_memory(graph, batch=4, seq_len=64, dtype="float32")
    roomy = DeviceMemory("Big box", est.total)       # exactly enough still fits
    tight = DeviceMemory("Small box", est.total - 1)
    shown = memory_view(graph, batch=4, seq_len=64, dtype="float32", device=roomy)
    assert shown.role == "ok" and fits(shown.estimate, roomy) is True
    assert shown.verdict == (f"✔ Fits on this machine: Big box, {bytes_label(est.total)} "
                             "(100% used).")
    shown = memory_view(graph, batch=4, seq_len=64, dtype="float32", device=tight)
    assert shown.role == "error" and fits(shown.estimate, tight) is False
    assert shown.verdict.startswith("✘ Does not fit: Small box has ")
    quarter = DeviceMemory("Quarter", est.total // 4)
    assert f"this needs {est.total / quarter.total:.1f}×" in memory_view(
        graph, batch=4, seq_len=64, dtype="float32", device=quarter).verdict
    assert shown.rows["total"] == bytes_label(est.total)
    assert shown.rows["weights"] == bytes_label(4 * report_on_graph(graph).cost.total_params)


def test_no_device_no_estimate_or_errors_give_no_fits_verdict():
    graph = load_preset("tiny-gpt")
    unknown = memory_view(graph, batch=1, seq_len=8, dtype="float32", device=None)
    assert unknown.verdict == "This machine's memory is unknown." and unknown.role == "muted"
    assert fits(unknown.estimate, None) is None and unknown.estimate is not None
    device = DeviceMemory("Any", 1 << 40)
    refused = memory_view(graph, batch=0, seq_len=8, dtype="float32", device=device)
    assert refused.verdict.startswith("No estimate: batch and seq_len must be at least 1")
    assert refused.estimate is None and set(refused.rows.values()) == {"—"}
    reason = unavailable_reason(report_on_graph(_broken_gpt()))
    blocked = memory_view(graph, batch=1, seq_len=8, dtype="float32", device=device,
                          unavailable=reason)
    assert blocked.verdict == reason and blocked.role == "error" and blocked.estimate is None


def test_errors_make_the_numbers_unavailable_and_say_how_many():
    good, bad = report_on_graph(load_preset("tiny-gpt")), report_on_graph(_broken_gpt())
    assert unavailable_reason(good) == "" and bad.errors == 2  # the attention and its group
    assert unavailable_reason(bad).startswith("Unavailable: the graph has 2 errors (see")
    assert set(model_lines(bad).values()) == {"unavailable"} and block_rows(bad) == []
    lines = model_lines(good)
    assert lines["total"].endswith(f"({good.cost.total_params:,})")
    assert lines["flops"].endswith(f"at {good.cost.context_length} tokens")


def test_block_rows_run_largest_first_and_share_only_the_top_level():
    report = report_on_graph(load_preset("tiny-gpt"))
    rows = block_rows(report)
    assert [r.params for r in rows] == sorted((r.params for r in rows), reverse=True)
    assert all(r.params for r in rows) and rows[0].where == "layers"
    assert "layers/attn" in {r.where for r in rows}
    shares = dict(zip((r.where for r in rows), share_texts(rows)))
    top = sum(r.params for r in rows if not r.path)
    assert shares["layers"] == f"{100 * report.cost.node_params[((), 'layers')] / top:.1f}%"
    assert shares["layers/attn"] == "one copy"


def test_training_memory_follows_batch_and_dtype_and_says_whether_it_fits():
    """What the Costs panel's memory box shows (memory_view for its batch, length, dtype and
    this machine): moved from test_feedback, where a window's spin boxes were set."""
    graph = load_preset("tiny-gpt")
    device = training_device()
    shown = memory_view(graph, batch=4, seq_len=64, dtype="float32", device=device)
    est = shown.estimate
    params = report_on_graph(graph).cost.total_params
    # weights and gradients in fp32 (4 bytes each) plus AdamW's two fp32 moments (8 bytes)
    assert est.weights == est.gradients == 4 * params
    assert est.optimizer == 8 * params
    assert est.total == est.weights + est.gradients + est.optimizer + est.activations
    assert shown.rows["total"] == bytes_label(est.total)
    activations_b4 = est.activations
    shown = memory_view(graph, batch=8, seq_len=64, dtype="float32", device=device)
    assert shown.estimate.activations == 2 * activations_b4  # linear in the batch
    assert fits(shown.estimate, device) is True and "Fits" in shown.verdict
    # a GPT-3 sized run does not fit in this machine's RAM, and the panel says so
    ram = system_ram()
    assert ram and device.total == ram
    shown = memory_view(load_preset("gpt3-175b"), batch=8, seq_len=64, dtype="float32",
                        device=device)
    assert fits(shown.estimate, device) is False
    assert "Does not fit" in shown.verdict
