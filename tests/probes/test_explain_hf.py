"""A GPT-2 imported from a local Hugging Face folder walks like any tfstudio model, and the walk's
attention and logits are Hugging Face's own (transformers as the second implementation)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tfstudio.export import import_hf
from tfstudio.probes import ProbeInputs, forward_walk, logit_lens
from tfstudio.runs import RunFolder

torch.set_num_threads(1)


def test_imported_gpt2_walk_matches_transformers(tmp_path):
    import transformers  # a second of import: here, not at collection

    config = transformers.GPT2Config(vocab_size=97, n_embd=32, n_layer=2, n_head=4,
                                     n_positions=64, activation_function="gelu_new",
                                     bos_token_id=None, eos_token_id=None)
    torch.manual_seed(0)
    hf = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():  # off the default init, so every weight matters
        for p in hf.parameters():
            p.add_(0.05 * torch.randn_like(p))
    hf.save_pretrained(tmp_path / "hf")
    import_hf(tmp_path / "hf", tmp_path / "run")
    model = RunFolder(tmp_path / "run").load_model()
    ids = torch.randint(0, 97, (1, 10), generator=torch.Generator().manual_seed(1))
    inputs = ProbeInputs((ids,), {"tokens": ids[0].tolist()}, {"tokens": []}, "tokens")
    hf.config._attn_implementation = "eager"  # the implementation that returns its weights
    with torch.no_grad():
        out = hf(ids, output_attentions=True, output_hidden_states=True)
    assert len(out.attentions) == 2
    for layer in range(2):
        walk = forward_walk(model, inputs, head=3, layer=layer)
        softmax = next(s for s in walk.steps if s.name.endswith("head 3: softmax"))
        np.testing.assert_allclose(softmax.value, out.attentions[layer][0, 3].numpy(),
                                   atol=1e-5)
    logits = next(s for s in walk.steps if s.name.endswith(": logits"))
    np.testing.assert_allclose(logits.value, out.logits[0].numpy(), atol=1e-4)
    # the lens's last row is the output; its first is HF's embedding stream read out
    lens = logit_lens(model, inputs, keep_logits=True)
    np.testing.assert_allclose(lens.logits[-1], out.logits[0].numpy(), atol=1e-4)
    first = hf.lm_head(hf.transformer.ln_f(out.hidden_states[0]))[0]
    np.testing.assert_allclose(lens.logits[0], first.detach().numpy(), atol=1e-4)
