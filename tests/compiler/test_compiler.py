"""compile_graph: every preset builds with the schema's parameter counts, runs, is causal,
decodes incrementally with a KV cache, ties weights, and refuses broken graphs clearly."""
import math
import sys
import types

import pytest
import torch

from tfstudio.compiler import CompileError, compile_graph
from tfstudio.graph import Edge, Node
from tfstudio.graph.schema import get_spec
from tfstudio.graph.shapes import infer_shapes
from tfstudio.graph.templates import ModelBuilder, transformer_lm
from tfstudio.nn import CrossAttention, MixtureOfExperts, SelfAttention
from tfstudio.presets import load_preset, preset_names

TINY = [n for n in preset_names() if n.startswith("tiny-")]
DECODING = ["tiny-gpt", "tiny-llama", "tiny-mistral", "tiny-alibi-gpt", "tiny-t5", "tiny-lstm",
            "tiny-gpt3-local", "tiny-mixtral", "tiny-transformer"]


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def hook_total(graph) -> int:
    """Parameters by the schema hooks alone: every node, groups times their repeat."""
    shapes = infer_shapes(graph)

    def walk(g, path):
        total = 0
        for node in g:
            if node.subgraph is not None:
                total += int(node.param("repeat")) * walk(node.subgraph, path + (node.id,))
            else:
                spec = get_spec(node.type)
                total += spec.count_params(node.resolved_params(),
                                           shapes.input_shapes(node.id, path))
        return total
    return walk(graph, ())


def inputs_for(model, length=40, source_length=11, batch=2):
    ids = torch.randint(0, model.vocab_size, (batch, length))
    if model.family == "encoder-decoder":
        return (torch.randint(0, model.vocab_size, (batch, source_length)), ids)
    return (ids,)


def call(model, inputs, stream):
    """``model`` on ``inputs`` with the decoded stream (last input) replaced by ``stream``."""
    return model(*inputs[:-1], stream)


# ---------------------------------------------------------------- presets
@pytest.mark.parametrize("name", preset_names())
def test_every_preset_compiles_with_the_schema_parameter_count(name):
    graph = load_preset(name)
    with torch.device("meta"):  # gpt3-175b and friends allocate nothing
        model = compile_graph(graph)
    assert sum(p.numel() for p in model.parameters()) == hook_total(graph)
    assert model.family == graph.meta["family"]


def test_published_sizes_come_out():
    with torch.device("meta"):
        sizes = {n: sum(p.numel() for p in compile_graph(load_preset(n)).parameters())
                 for n in ("gpt2-small", "llama", "mixtral")}
    assert sizes["gpt2-small"] == 124_439_808              # GPT-2 small with tied head
    assert round(sizes["llama"] / 1e9, 2) == 8.03          # Llama-3-8B
    assert round(sizes["mixtral"] / 1e9, 1) == 46.7        # Mixtral-8x7B


@pytest.mark.parametrize("name", TINY)
def test_tiny_presets_run_forward_and_backward(name):
    model = compile_graph(load_preset(name))
    inputs = inputs_for(model, length=12)
    logits = model(*inputs)
    assert logits.shape == (2, 12, model.vocab_size)
    targets = torch.randint(0, model.vocab_size, (2 * 12,))
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets)
    (loss + model.aux_loss()).backward()
    assert abs(loss.item() - math.log(model.vocab_size)) < 0.3  # small init: near uniform
    missing = [n for n, p in model.named_parameters() if p.grad is None]
    if not any(isinstance(m, MixtureOfExperts) for m in model.modules()):
        assert missing == []


# ---------------------------------------------------------------- causality and the KV cache
@pytest.mark.parametrize("name", DECODING)
def test_changing_a_later_token_never_changes_earlier_logits(name):
    model = compile_graph(load_preset(name)).eval()
    inputs = inputs_for(model)
    changed = inputs[-1].clone()
    changed[:, 25:] = (changed[:, 25:] + 1) % model.vocab_size
    with torch.no_grad():
        a, b = model(*inputs), call(model, inputs, changed)
    assert torch.equal(a[:, :25], b[:, :25])
    assert not torch.allclose(a[:, 25:], b[:, 25:])


@pytest.mark.parametrize("name", DECODING)
def test_incremental_decoding_equals_the_full_forward(name):
    model = compile_graph(load_preset(name)).eval()
    inputs = inputs_for(model)  # 40 tokens: past tiny-mistral's 16-token window
    stream = inputs[-1]
    with torch.no_grad():
        full = model(*inputs)
        cache = model.new_cache()
        pieces = [model(*inputs[:-1], stream[:, a:b], cache=cache)
                  for a, b in [(0, 9), (9, 10), (10, 11), (11, 30), (30, 40)]]
    assert cache.offset == 40
    assert torch.allclose(torch.cat(pieces, 1), full, atol=1e-5)


def test_the_encoder_runs_once_per_cache():
    model = compile_graph(load_preset("tiny-t5")).eval()
    src, tgt = inputs_for(model)
    calls = []
    model.encoder[0].register_forward_hook(lambda *a: calls.append(1))
    cache = model.new_cache()
    with torch.no_grad():
        model(src, tgt[:, :5], cache=cache)
        model(src, tgt[:, 5:6], cache=cache)
    assert len(calls) == 1


def test_encoders_refuse_a_cache():
    model = compile_graph(load_preset("tiny-bert"))
    assert model.family == "encoder" and model.head_type == "mlm_head"
    with pytest.raises(ValueError, match="bidirectional"):
        model.new_cache()


def test_a_decoder_with_bidirectional_attention_refuses_a_cache():
    graph = load_preset("tiny-gpt")
    graph.node("layers").subgraph.node("attn").params["causal"] = False
    with pytest.raises(ValueError, match="no incremental decoding"):
        compile_graph(graph, validate=False).new_cache()  # the validator refuses it too


def test_learned_positions_past_the_table_say_so():
    model = compile_graph(load_preset("tiny-gpt"))  # max_len 256
    with pytest.raises(ValueError, match="max_len=256"):
        model(torch.zeros(1, 257, dtype=torch.long))


# ---------------------------------------------------------------- interface
def test_family_roles_and_head():
    t5 = compile_graph(load_preset("tiny-t5"))
    assert (t5.family, t5.input_roles, t5.head_type) == (
        "encoder-decoder", ["source", "target"], "seq2seq_head")
    gpt = compile_graph(load_preset("tiny-gpt"))
    assert (gpt.family, gpt.input_roles, gpt.head_type, gpt.vocab_size) == (
        "decoder", ["tokens"], "lm_head", 256)
    assert gpt.graph is not None and "layers" in gpt.graph.nodes


def test_blocks_map_graph_nodes_and_copies_to_modules():
    model = compile_graph(load_preset("tiny-t5"))
    blocks = dict(model.blocks())
    assert isinstance(blocks[("decoder", 1, "cross")], CrossAttention)
    assert blocks[("decoder", 1, "cross")] is model.decoder[1].cross
    assert blocks[("encoder", 0)] is model.encoder[0]
    assert blocks[("head",)] is model.head
    kinds = [(k, type(m)) for k, m in model.attention_modules()]
    assert len(kinds) == 2 + 2 * 2  # encoder self; decoder self + cross
    assert all(issubclass(t, (SelfAttention, CrossAttention)) for _, t in kinds)


def test_tied_weights_are_the_same_tensor():
    gpt = compile_graph(load_preset("tiny-gpt"))
    assert gpt.head.proj.weight is gpt.embed.weight
    t5 = compile_graph(load_preset("tiny-t5"))
    assert t5.head.proj.weight is t5.tgt_embed.weight
    assert t5.head.proj.weight is not t5.src_embed.weight
    untied = compile_graph(transformer_lm(name="u", description="", vocab=50, d_model=16,
                                          layers=1, heads=2, d_ff=32, tie=False))
    assert untied.head.proj.weight is not untied.embed.weight


def test_initialisation_scales_residual_projections():
    layers = 4
    model = compile_graph(transformer_lm(name="i", description="", vocab=500, d_model=256,
                                         layers=layers, heads=4, d_ff=1024))
    first = model.layers[0]
    residual_std = 0.02 / math.sqrt(2 * layers)  # GPT-2: 2 residual branches per layer
    assert first.attn.qkv.weight.std().item() == pytest.approx(0.02, rel=0.03)
    assert first.attn.out.weight.std().item() == pytest.approx(residual_std, rel=0.03)
    assert first.ffn.down.weight.std().item() == pytest.approx(residual_std, rel=0.03)
    assert first.ffn.up.weight.std().item() == pytest.approx(0.02, rel=0.03)
    assert model.embed.weight.std().item() == pytest.approx(0.02, rel=0.03)
    assert torch.all(first.attn.qkv.bias == 0) and torch.all(first.norm_attn.weight == 1)


def test_attention_weights_read_at_a_hook_point_through_the_model():
    from tfstudio.nn import attached

    model = compile_graph(load_preset("tiny-llama")).eval()
    ids = torch.randint(0, 256, (1, 10))
    seen = {}
    with torch.no_grad():
        fast = model(ids)
        with attached(model, lambda name, _p, w: seen.update({name: w}),
                      names={"layers.0.attn.hook_weights", "layers.1.attn.hook_weights"}):
            slow = model(ids)
    assert torch.allclose(fast, slow, atol=1e-5)
    w = seen["layers.1.attn.hook_weights"]
    assert w.shape == (1, 4, 10, 10)
    assert torch.allclose(w.sum(-1), torch.ones(1, 4, 10), atol=1e-5)
    assert torch.all(w.triu(1) == 0)


def test_aux_loss_sums_the_moe_layers():
    model = compile_graph(load_preset("tiny-mixtral"))
    model(torch.randint(0, 256, (2, 8)))
    moes = [m for _, m in model.blocks() if isinstance(m, MixtureOfExperts)]
    assert len(moes) == 2
    assert model.aux_loss().item() == pytest.approx(sum(m.aux_loss.item() for m in moes))
    assert model.aux_loss().requires_grad
    gpt = compile_graph(load_preset("tiny-gpt"))
    assert gpt.aux_loss().item() == 0.0


# ---------------------------------------------------------------- the generated code
def test_forward_is_static_code_calling_each_module_once():
    model = compile_graph(load_preset("tiny-gpt"))
    src = model.source
    # the group titled "decoder layer" makes class DecoderLayer
    layer_forward = src.split("class DecoderLayer")[1].split("def forward")[1].split("class ")[0]
    for node in ("norm_attn", "attn", "norm_ffn", "ffn"):
        assert layer_forward.count(f"self.{node}(") == 1
    for add in ("add_attn", "add_ffn"):  # residual sums are written inline, not modules
        assert add not in src
    assert "self.graph" not in src and "get_spec" not in src
    assert "for layer in self.layers:" in src


def test_generated_code_reads_like_a_hand_written_model():
    """nanoGPT's shape: pre-norm residuals inline, the stream called x, logits returned, no
    argument that equals its default, no line past 100 columns."""
    for name in ("tiny-gpt", "tiny-llama", "tiny-t5", "tiny-bert", "tiny-mixtral"):
        src = compile_graph(load_preset(name)).source
        assert max(len(line) for line in src.splitlines()) <= 100, name
        assert "return logits" in src and "tokens = ids" not in src, name
        assert "LayersLayer" not in src and "\n        layers = " not in src, name
    llama = compile_graph(load_preset("tiny-llama")).source
    assert "        x = x + self.attn(self.norm_attn(x), cache)\n" in llama
    assert "        x = x + self.ffn(self.norm_ffn(x))\n" in llama
    # SelfAttention's defaults (causal=True, window=0, dropout=0.0, rope_base=10000.0) omitted
    assert "self.attn = SelfAttention(d_model=64, kv_heads=2, bias=False, position='rope')" \
        in llama
    assert "self.ffn = FeedForward(d_model=64, d_ff=176, activation='swiglu', bias=False)" \
        in llama


def rename(graph, old, new):
    node = graph.nodes.pop(old)
    node.id = new
    graph.nodes[new] = node
    graph.edges = [Edge(new if e.src == old else e.src, e.src_port,
                        new if e.dst == old else e.dst, e.dst_port) for e in graph.edges]


def test_awkward_node_ids_become_safe_names():
    graph = load_preset("tiny-gpt")
    sub = graph.node("layers").subgraph
    # Python keywords, nn.Module attributes, names the generated code uses
    for old, new in {"attn": "if", "ffn": "forward", "norm_attn": "training",
                     "add_ffn": "cache"}.items():
        rename(sub, old, new)
    rename(graph, "layers", "graph")  # its layer class would be called GraphLayer
    rename(graph, "embed", "self")
    model = compile_graph(graph, validate=False)
    blocks = dict(model.blocks())
    assert isinstance(blocks[("graph", 0, "if")], SelfAttention)
    assert blocks[("self",)].weight is model.head.proj.weight
    assert model(torch.randint(0, 256, (1, 5))).shape == (1, 5, 256)
    assert model.training is True  # the node called 'training' did not clobber nn.Module's flag


def test_code_in_a_node_id_is_refused():
    graph = load_preset("tiny-gpt")
    node = graph.nodes.pop("final_norm")
    node.id = "x; import os"
    graph.nodes[node.id] = node  # bypassing add_node's check on purpose
    with pytest.raises(CompileError, match="not a plain identifier"):
        compile_graph(graph, validate=False)


# ---------------------------------------------------------------- refusals
def tiny_builder():
    b = ModelBuilder({"name": "t"})
    b.add("tokens", "token_input")
    b.add("embed", "token_embedding", {"vocab_size": 50, "d_model": 16}, [("tokens", "ids", "ids")])
    return b


def test_an_unconnected_input_names_the_node():
    b = tiny_builder()
    b.add("attn", "attention", {"heads": 2, "kv_heads": 2})
    b.add("head", "lm_head", {"vocab_size": 50, "tie": False}, [("attn", "y", "x")])
    with pytest.raises(CompileError, match=r"node 'attn'.*input 'x' is not connected"):
        compile_graph(b.graph, validate=False)


@pytest.mark.parametrize("case,message", [
    ("no head", "no output head"),
    ("two heads", "2 output heads"),
    ("tied without embedding", "no token embedding feeds it"),
    ("roles", "roles source, tokens"),
])
def test_structural_refusals(case, message):
    b = tiny_builder()
    if case == "no head":
        b.add("norm", "norm", {}, [("embed", "y", "x")])
    elif case == "two heads":
        b.add("h1", "lm_head", {"vocab_size": 50}, [("embed", "y", "x")])
        b.add("h2", "lm_head", {"vocab_size": 50}, [("embed", "y", "x")])
    elif case == "tied without embedding":
        b.graph.remove_node("embed")
        b.graph.remove_node("tokens")
        b.add("tokens", "token_input")
        b.add("rnn", "rnn", {"hidden_size": 8})
        b.add("head", "lm_head", {"vocab_size": 50, "tie": True}, [("rnn", "y", "x")])
    else:
        b.add("src", "token_input", {"role": "source"})
        b.add("head", "lm_head", {"vocab_size": 50}, [("embed", "y", "x")])
    with pytest.raises(CompileError, match=message):
        compile_graph(b.graph, validate=False)


def test_validation_errors_are_refused_with_their_hints(monkeypatch):
    fake = types.ModuleType("tfstudio.graph.validate")
    diag = types.SimpleNamespace(severity="error", message="heads do not divide d_model",
                                 hint="use 4 heads", node_id="attn", path=("layers",), code="x")
    warn = types.SimpleNamespace(severity="warning", message="just a warning", hint="",
                                 node_id=None, path=(), code="y")
    fake.validate = lambda graph: [diag, warn]
    monkeypatch.setitem(sys.modules, "tfstudio.graph.validate", fake)
    with pytest.raises(CompileError) as err:
        compile_graph(load_preset("tiny-gpt"))
    assert "layers > attn: heads do not divide d_model (fix: use 4 heads)" in str(err.value)
    assert "just a warning" not in str(err.value)
    fake.validate = lambda graph: [warn]
    assert compile_graph(load_preset("tiny-gpt")).family == "decoder"


def test_real_validator_accepts_every_preset():
    from tfstudio.graph.validate import validate
    for name in preset_names():
        errors = [d for d in validate(load_preset(name)) if d.severity == "error"]
        assert errors == [], name


def test_a_block_without_torch_implementation_is_named(monkeypatch):
    from tfstudio.blocks._common import same_as_input, x_in, y_out
    from tfstudio.graph import schema
    spec = schema.BlockSpec(type="mystery", family="test", title="Mystery", description="",
                            inputs=(x_in(),), outputs=(y_out(),), infer=same_as_input(),
                            count_params=lambda p, s: 0)
    monkeypatch.setitem(schema._REGISTRY, "mystery", spec)
    graph = load_preset("tiny-gpt")
    graph.add_node(Node("odd", "mystery"))
    graph.edges = [e for e in graph.edges if e.dst != "head"]
    graph.add_edge(Edge("final_norm", "y", "odd", "x"))
    graph.add_edge(Edge("odd", "y", "head", "x"))
    with pytest.raises(CompileError, match="node 'odd': block type 'mystery' has no torch"):
        compile_graph(graph, validate=False)
