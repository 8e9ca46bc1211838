"""Models for the probe tests: a preset fitted to a tokenizer, with biases off zero and norms off
one so that every term of a block's formula is exercised; presets edited for one test; graphs
written as in a file; a trainer after a step."""
import torch

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.presets import load_preset
from tfstudio.train.pipeline import fit_graph_to_tokenizer

TEXT = "abcab cabca>bcabc"


def model_of(preset: str, tokenizer, seed: int = 0):
    torch.manual_seed(seed)
    model = compile_graph(fit_graph_to_tokenizer(load_preset(preset), tokenizer))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") or "norm" in name:
                p.add_(0.1 * torch.randn_like(p))
    return model.eval()


def block_of(model, name: str):
    return {".".join(map(str, k)): m for k, m in model.blocks()}[name]


def edited(preset: str, tokenizer, edit):
    graph = fit_graph_to_tokenizer(load_preset(preset), tokenizer)
    edit(graph)
    torch.manual_seed(0)
    return compile_graph(graph).eval()


def one_layer(graph):
    graph.nodes["layers"].params["repeat"] = 1


def graph_file(nodes, edges):
    """The model of a graph written as in a file, fitted to the byte tokenizer."""
    from tfstudio.graph.serialize import graph_from_dict
    from tfstudio.graph.validate import validate
    graph = graph_from_dict({"format_version": 1, "meta": {"name": "test"},
                             "nodes": nodes, "edges": edges})
    assert validate(graph) == []
    torch.manual_seed(0)
    return compile_graph(fit_graph_to_tokenizer(graph, build_tokenizer("byte"))).eval()


STEM = {"nodes": [{"id": "inputs", "type": "group_input", "params": {"ports": "ids:ids"}},
                  {"id": "embed", "type": "token_embedding", "params": {"d_model": 64}},
                  {"id": "ffn", "type": "feed_forward", "params": {"d_ff": 128}},
                  {"id": "outputs", "type": "group_output", "params": {"ports": "y:hidden"}}],
        "edges": [["inputs", "ids", "embed", "ids"], ["embed", "y", "ffn", "x"],
                  ["ffn", "y", "outputs", "y"]]}
TOKENS = {"id": "tokens", "type": "token_input", "params": {"role": "tokens"}}
HEAD = {"id": "head", "type": "lm_head", "params": {"vocab_size": 256, "tie": False}}


def trained(preset: str, tmp_path, **config):
    """A trainer after its steps (one unless told; its pipeline and model set up)."""
    import tfstudio
    from tfstudio.runs import TrainConfig
    from tfstudio.train.trainer import Trainer
    cfg = TrainConfig(**{"tokenizer": "byte", "steps": 1, "batch_size": 2, "seq_len": 32,
                         "eval_every": 100, "log_every": 1, **config})
    trainer = Trainer(tfstudio.load_graph(preset), cfg, run_dir=tmp_path / "run")
    assert trainer.run().kind == "Finished"
    return trainer
