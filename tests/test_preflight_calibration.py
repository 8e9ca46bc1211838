"""The memory pre-flight's training estimate is calibrated against what runs really take:
the activations the cost model counts match what autograd keeps for the backward, and the
estimated peak of a CPU training process is within 1.5x of its measured peak RSS."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import tfstudio
from tfstudio.graph.cost import training_memory

ROOT = Path(__file__).resolve().parents[1]


def saved_for_backward(graph, batch: int, seq_len: int) -> int:
    """Bytes of the distinct tensors autograd keeps from one forward and loss."""
    from tfstudio.compiler import compile_graph
    model = compile_graph(graph)
    vocab = 256
    tokens = torch.randint(0, vocab, (batch, seq_len))
    storages: dict[int, int] = {}

    def pack(t):
        storage = t.untyped_storage()
        storages[storage.data_ptr()] = max(storages.get(storage.data_ptr(), 0), storage.nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        logits = model(tokens)
        torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), tokens.reshape(-1))
    return sum(storages.values())


@pytest.mark.parametrize("preset", ["tiny-gpt", "tiny-llama", "tiny-mistral", "tiny-alibi-gpt"])
def test_the_counted_activations_are_what_autograd_keeps(preset):
    """ALiBi's bias keeps each head's softmax row (heads x T values a token): counted."""
    torch.manual_seed(0)
    graph = tfstudio.load_graph(preset)
    counted = training_memory(graph, batch=4, seq_len=128).activations
    kept = saved_for_backward(graph, 4, 128)
    assert 0.8 <= kept / counted <= 1.25, f"{preset}: kept {kept:,} B, counted {counted:,} B"


CHILD = r"""
import json, sys
import psutil
from tfstudio.presets import load_preset
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.preflight import estimated_peak_rss, training_need
from tfstudio.train.pipeline import fit_graph_to_tokenizer
from tfstudio.train.trainer import Trainer
from tfstudio.data import build_tokenizer, load_corpus
from tfstudio.data.simple_tokenizers import ByteTokenizer
preset, batch, length, spec = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]


def peak_rss():
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss across fork and exec, so a child of a large
    # test process would report the parent's size (a 1 GB pytest worker) as its own peak
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024


config = TrainConfig(corpus="sample:small", tokenizer="byte", steps=2, batch_size=batch,
                     seq_len=length, warmup_steps=0, eval_every=0, device="cpu",
                     precision="fp32", no_memory_check=True)
corpus = load_corpus("sample:small")
if spec.startswith("wide:"):  # byte ids under a head this many rows wide (GPT-2's: 50,257)
    class Wide(ByteTokenizer):
        ordinary_vocab_size = int(spec.split(":")[1])
    tokenizer = Wide()
else:
    tokenizer = build_tokenizer(spec, corpus)
resident = psutil.Process().memory_info().rss
trainer = Trainer(load_preset(preset), config, tokenizer=tokenizer, corpus=corpus)
assert trainer.run().kind == "Finished"
need = training_need(fit_graph_to_tokenizer(load_preset(preset), trainer.tokenizer),
                     batch=batch, seq_len=length, precision="fp32")
print(json.dumps({"estimate": estimated_peak_rss(need, resident),
                  "peak": peak_rss()}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("preset,batch,seq_len,tokenizer", [
    ("tiny-gpt", 8, 64, "byte"),           # the interpreter and torch are most of it
    ("tiny-alibi-gpt", 64, 256, "byte"),   # the softmax rows ALiBi keeps
    ("tiny-llama", 128, 256, "byte"),      # activations are most of it (about 1.5 GB)
    ("tiny-llama", 128, 256, "char"),      # a 52-token vocabulary
    ("tiny-gpt", 64, 256, "bpe:2000"),     # BPE (761 tokens on this corpus)
    ("tiny-gpt", 8, 256, "wide:50257"),    # GPT-2's head width: the logits' term dominates
])
def test_the_estimated_peak_is_within_one_and_a_half_times_the_measured_peak_rss(
        preset, batch, seq_len, tokenizer):
    # each case is its own process: its high-water RSS is the peak of the process that trained
    done = subprocess.run([sys.executable, "-c", CHILD, preset, str(batch), str(seq_len),
                           tokenizer],
                          env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout.strip().splitlines()[-1])
    ratio = row["estimate"] / row["peak"]
    print(f"{preset} {batch}x{seq_len}: estimate {row['estimate'] / 1e6:,.0f} MB, "
          f"peak {row['peak'] / 1e6:,.0f} MB, ratio {ratio:.2f}")
    assert 1 / 1.5 <= ratio <= 1.5
