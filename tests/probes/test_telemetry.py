"""Telemetry (tfstudio/probes/telemetry.py): values folded onto a level of groups, activation RMS."""
from __future__ import annotations

import pytest
import torch
from probe_models import block_of

torch.set_num_threads(1)


def test_values_fold_onto_a_level_two_groups_deep():
    from tfstudio.probes import node_values
    values = {"enc.0.layers.1.attn": 3.0, "enc.1.layers.0.attn": 4.0, "enc.0.ffn": 1.0,
              "embed": 2.0}
    assert node_values(values, ("enc", "layers")) == {"attn": 5.0}   # sqrt(9 + 16)
    copies = {"enc.0.layers.1": 3.0, "enc.1.layers.0": 4.0, "enc.0.ffn": 1.0}  # group copies
    assert node_values(copies, ("enc",)) == {"layers": 5.0, "ffn": 1.0}


def test_the_activation_rms_covers_the_whole_batch(gpt):
    from tfstudio.probes import ActivationRecorder
    model, _ = gpt
    ids = torch.tensor([[1, 2, 3, 4], [200, 100, 50, 25]])
    with ActivationRecorder(model) as recorder, torch.no_grad():
        model(ids)
        embedded = block_of(model, "embed")(ids)
    assert float(embedded[0].pow(2).mean().sqrt()) != pytest.approx(
        float(embedded.pow(2).mean().sqrt()), rel=1e-3)
    assert recorder.values["embed"] == pytest.approx(
        float(embedded.pow(2).mean().sqrt()), rel=1e-6)
