"""Hugging Face interop: tfstudio -> transformers and transformers -> tfstudio give the same
logits (transformers' own implementations are the independent reference), refusals name the
node in the way, and tokenizers keep their ids."""
import json
import os

import pytest
import torch

from tfstudio.compiler import compile_graph
from tfstudio.export import ExportRefused, InteropError, export_hf, hf_plan, import_hf
from tfstudio.graph.templates import transformer_lm
from tfstudio.presets import load_preset
from tfstudio.runs.folder import RunFolder

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers loads: never download
transformers = None  # a test dependency (pyproject [test]), loaded by the fixture below


@pytest.fixture(autouse=True, scope="module")
def _transformers():
    """transformers takes a second to import: the first test here loads it, not collection."""
    global transformers
    import transformers
    transformers.logging.set_verbosity_error()

VOCAB = 300
SMALL = dict(description="", vocab=VOCAB, d_model=32, layers=2, heads=4, max_len=64)
ROPE = dict(norm_kind="rmsnorm", pos_scheme="none", attn_position="rope", eps=1e-5)


def perturbed(module, seed=0):
    """Random weights well away from the init (unit norms, zero biases would hide mistakes)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.randn(p.shape, generator=g) * 0.1)
    return module.eval()


def set_param(graph, block_type, **params):
    for _, node in graph.walk():
        if node.type == block_type:
            node.params.update(params)
    return graph


def ids(length=12, seed=1):
    return torch.randint(0, VOCAB, (2, length), generator=torch.Generator().manual_seed(seed))


GRAPHS = {
    "GPT2LMHeadModel": lambda: transformer_lm(name="g", d_ff=64, activation="gelu_tanh",
                                              **SMALL),
    # GQA, untied, biases everywhere, GEGLU, RoPE base 500 with linear scaling 2
    "LlamaForCausalLM": lambda: set_param(transformer_lm(
        name="l", kv_heads=2, d_ff=48, activation="geglu", bias=True, tie=False,
        rope_base=500.0, **ROPE, **SMALL), "attention", rope_scaling=2.0),
    # a 5-token sliding window, shorter than the 12-token test sequence
    "MistralForCausalLM": lambda: transformer_lm(name="m", kv_heads=2, d_ff=48,
                                                 activation="swiglu", bias=False, window=5,
                                                 **ROPE, **SMALL),
    "MixtralForCausalLM": lambda: transformer_lm(name="x", kv_heads=1, d_ff=40,
                                                 activation="swiglu", bias=False, tie=False,
                                                 moe={"experts": 4, "top_k": 2}, **ROPE,
                                                 **SMALL),
    "BertForMaskedLM": lambda: transformer_lm(name="b", d_ff=64, encoder=True, placement="post",
                                              embed_norm=True, tie=False, **SMALL),
}


@pytest.mark.parametrize("architecture", list(GRAPHS))
def test_export_loads_in_transformers_with_the_same_logits(tmp_path, architecture):
    model = perturbed(compile_graph(GRAPHS[architecture]()))
    report = export_hf(model, tmp_path)
    assert report.family == architecture
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["architectures"] == [architecture]

    auto = (transformers.AutoModelForMaskedLM if architecture == "BertForMaskedLM"
            else transformers.AutoModelForCausalLM)
    hf, info = auto.from_pretrained(tmp_path, output_loading_info=True)
    assert type(hf).__name__ == architecture
    assert not info["missing_keys"] and not info["unexpected_keys"]
    assert not info["mismatched_keys"]
    with torch.no_grad():
        ours, theirs = model(ids()), hf.eval()(ids()).logits
    assert ours.std() > 0.1  # not a degenerate comparison
    assert torch.allclose(ours, theirs, atol=1e-4), (ours - theirs).abs().max()


HF_CONFIGS = {
    "gpt2": lambda: transformers.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4,
                                            n_positions=64, activation_function="gelu_new",
                                            bos_token_id=None, eos_token_id=None),
    "llama": lambda: transformers.LlamaConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=48, rope_theta=300.0, attention_bias=True,
        bos_token_id=None, eos_token_id=None,
        rope_scaling={"rope_type": "linear", "factor": 3.0}),
    "mistral": lambda: transformers.MistralConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=48, sliding_window=4, head_dim=8,
        bos_token_id=None, eos_token_id=None),
    "mixtral": lambda: transformers.MixtralConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=40, num_local_experts=4,
        num_experts_per_tok=2, bos_token_id=None, eos_token_id=None),
    "qwen2": lambda: transformers.Qwen2Config(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=48, tie_word_embeddings=True),
    "bert": lambda: transformers.BertConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=64, layer_norm_eps=1e-5),
    "bert-untied": lambda: transformers.BertConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=48, max_position_embeddings=40, layer_norm_eps=1e-5,
        tie_word_embeddings=False),
}


@pytest.mark.parametrize("model_type", list(HF_CONFIGS))
def test_import_of_a_saved_transformers_model_gives_the_same_logits(tmp_path, model_type):
    config = HF_CONFIGS[model_type]()
    auto = (transformers.AutoModelForMaskedLM if model_type.startswith("bert")
            else transformers.AutoModelForCausalLM)
    torch.manual_seed(0)
    hf = perturbed(auto.from_config(config), seed=3)
    hf.save_pretrained(tmp_path / "hf")

    report = import_hf(tmp_path / "hf", tmp_path / "run")
    run = RunFolder(tmp_path / "run")
    model = run.load_model()
    assert report.family == type(hf).__name__
    with torch.no_grad():
        ours, theirs = model(ids()), hf(ids()).logits  # BERT: token_type_ids default to 0
    assert ours.std() > 0.1
    assert torch.allclose(ours, theirs, atol=1e-4), (ours - theirs).abs().max()
    # the imported graph is an ordinary tfstudio graph: it maps back onto the same family
    family, _ = hf_plan(run.graph())
    assert family == {"qwen2": "llama", "bert-untied": "bert"}.get(model_type, model_type)


@pytest.mark.parametrize("top_k", [1, 2])
def test_mixtral_round_trip_keeps_its_renormalised_weights(tmp_path, top_k):
    """HF -> tfstudio -> HF at top-1 and top-2: Mixtral divides the chosen probabilities by
    their sum (top-1: every weight 1), and both hops give HF's logits."""
    from tfstudio.graph.validate import validate

    config = transformers.MixtralConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=40, num_local_experts=4,
        num_experts_per_tok=top_k, bos_token_id=None, eos_token_id=None)
    torch.manual_seed(0)
    hf = perturbed(transformers.AutoModelForCausalLM.from_config(config), seed=6)
    hf.save_pretrained(tmp_path / "hf")
    import_hf(tmp_path / "hf", tmp_path / "run")
    run = RunFolder(tmp_path / "run")
    moes = [n for _, n in run.graph().walk() if n.type == "moe"]
    assert {(n.params["top_k"], n.params["weighting"]) for n in moes} == {(top_k, "renormalised")}
    warned = {d.code for d in validate(run.graph())}
    assert ("router_without_gradient" in warned) == (top_k == 1)
    export_hf(tmp_path / "run", tmp_path / "back")
    back = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "back").eval()
    with torch.no_grad():
        theirs, ours, again = hf(ids()).logits, run.load_model()(ids()), back(ids()).logits
    assert theirs.std() > 0.1
    assert torch.allclose(ours, theirs, atol=1e-4), (ours - theirs).abs().max()
    assert torch.allclose(again, theirs, atol=1e-4), (again - theirs).abs().max()


def test_a_switch_weighted_mixture_is_refused_as_mixtral():
    graph = transformer_lm(name="s", kv_heads=1, d_ff=40, activation="swiglu", bias=False,
                           moe={"experts": 4, "top_k": 1}, **ROPE, **SMALL)
    with pytest.raises(ExportRefused) as caught:   # top-1 built in tfstudio: Switch weights
        hf_plan(graph)
    assert caught.value.node_ids == ["moe"] and "set weighting to renormalised" in str(
        caught.value)
    set_param(graph, "moe", weighting="renormalised")
    assert hf_plan(graph)[0] == "mixtral"


def test_refusal_names_the_offending_node():
    graph = load_preset("tiny-llama")
    for _, node in graph.walk():
        if node.id == "attn":
            node.params["position"] = "alibi"
    with pytest.raises(ExportRefused) as caught:
        hf_plan(graph)
    assert caught.value.node_ids == ["attn"]
    assert "layers > attn" in str(caught.value) and "alibi" in str(caught.value)

    with pytest.raises(ExportRefused) as caught:
        hf_plan(load_preset("tiny-lstm"))
    assert caught.value.node_ids == ["rnn"]

    with pytest.raises(ExportRefused) as caught:  # dense and banded layers alternate
        hf_plan(load_preset("tiny-gpt3-local"))
    assert caught.value.node_ids == ["attn2"] and "window" in str(caught.value)

    with pytest.raises(ExportRefused) as caught:  # post-norm decoder: GPT-1, not GPT-2
        export_hf(transformer_lm(name="p", d_ff=64, placement="post", **SMALL), "unused")
    assert "pre-norm" in str(caught.value)


def test_import_refuses_what_does_not_fit(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen3"}))
    with pytest.raises(InteropError, match="q_norm"):
        import_hf(tmp_path, tmp_path / "run")
    (tmp_path / "config.json").write_text(json.dumps(
        {"model_type": "llama", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
         "num_attention_heads": 2, "intermediate_size": 8,
         "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}))
    with pytest.raises(InteropError, match="yarn"):
        import_hf(tmp_path, tmp_path / "run")


# ------------------------------------------------------------------------------ tokenizers
TEXT = ("Once upon a time, a fox met a crow. Ünïcödé, 日本語, tabs\tand\nnew lines,   "
        "spaces, 12345 and don't / I'll.")


@pytest.mark.parametrize("spec", ["byte", "char", "bpe:320"])
def test_exported_tokenizer_gives_the_same_ids_in_transformers(tmp_path, spec):
    from tfstudio.data import build_tokenizer, load_corpus
    from tfstudio.export.hf_tokenizer import export_files, import_tokenizer

    corpus = load_corpus("sample:small")
    tokenizer = build_tokenizer(spec, corpus, **({"use_cache": False} if "bpe" in spec else {}))
    export_files(tokenizer, tmp_path, 64)
    hf = transformers.PreTrainedTokenizerFast.from_pretrained(tmp_path)
    text = "".join(next(corpus.documents()))[:2000] + (TEXT if spec != "char" else "")
    assert hf.encode(text) == tokenizer.encode(text)
    assert hf.convert_tokens_to_ids("<|endoftext|>") == tokenizer.eot_id
    assert hf.decode(tokenizer.encode(text)) == tokenizer.decode(tokenizer.encode(text))
    restored, note = import_tokenizer(tmp_path)
    assert restored.to_dict() == tokenizer.to_dict(), note


def test_a_byte_level_bpe_trained_by_hf_tokenizers_imports_with_the_same_ids(tmp_path):
    import tokenizers  # installed with transformers
    from tfstudio.data import load_corpus
    from tfstudio.export.hf_tokenizer import import_tokenizer

    docs = ["".join(d) for d in load_corpus("sample:small").documents()]
    hf = tokenizers.ByteLevelBPETokenizer()
    hf.train_from_iterator(docs, vocab_size=420, min_frequency=2, show_progress=False)
    hf.add_special_tokens(["<|endoftext|>"])
    hf.save(str(tmp_path / "tokenizer.json"))
    ours, note = import_tokenizer(tmp_path)
    assert ours is not None, note
    text = docs[0][:3000] + TEXT
    assert ours.encode(text) == hf.encode(text).ids
    assert ours.eot_id == hf.token_to_id("<|endoftext|>")
    assert ours.decode(ours.encode(text)) == text


def _unprefixed_gpt2(tensors):
    """The original GPT-2 checkpoints: no "transformer." prefix, causal-mask buffers saved."""
    out = {k.removeprefix("transformer."): v for k, v in tensors.items()}
    out["h.0.attn.bias"] = torch.tril(torch.ones(1, 1, 64, 64))
    return out


def _fused_mixtral(tensors):
    """transformers 5's in-memory layout: experts fused into 3-D gate_up_proj / down_proj."""
    out, layers = {}, sorted({k.split(".")[2] for k in tensors if ".block_sparse_moe." in k})
    for k, v in tensors.items():
        if ".block_sparse_moe.experts." not in k:
            out[k.replace(".block_sparse_moe.", ".mlp.")] = v
    for i in layers:
        p = f"model.layers.{i}.block_sparse_moe.experts"
        n = len({k for k in tensors if k.startswith(p) and k.endswith("w1.weight")})
        out[f"model.layers.{i}.mlp.experts.gate_up_proj"] = torch.stack(
            [torch.cat([tensors[f"{p}.{e}.w1.weight"], tensors[f"{p}.{e}.w3.weight"]])
             for e in range(n)])
        out[f"model.layers.{i}.mlp.experts.down_proj"] = torch.stack(
            [tensors[f"{p}.{e}.w2.weight"] for e in range(n)])
    return out


def _old_bert(tensors):
    """Pre-2020 BERT checkpoints: LayerNorm gamma/beta, a pooler, the next-sentence head."""
    out = {k.replace("LayerNorm.weight", "LayerNorm.gamma")
            .replace("LayerNorm.bias", "LayerNorm.beta"): v for k, v in tensors.items()}
    out["bert.pooler.dense.weight"] = torch.zeros(32, 32)
    out["cls.seq_relationship.weight"] = torch.zeros(2, 32)
    return out


@pytest.mark.parametrize("model_type,rewrite", [("gpt2", _unprefixed_gpt2),
                                                ("mixtral", _fused_mixtral),
                                                ("bert", _old_bert)])
def test_older_and_newer_checkpoint_layouts_import_alike(tmp_path, model_type, rewrite):
    from safetensors.torch import load_file, save_file

    auto = (transformers.AutoModelForMaskedLM if model_type == "bert"
            else transformers.AutoModelForCausalLM)
    torch.manual_seed(0)
    hf = perturbed(auto.from_config(HF_CONFIGS[model_type]()), seed=4)
    hf.save_pretrained(tmp_path / "hf")
    weights = tmp_path / "hf" / "model.safetensors"
    save_file({k: v.contiguous() for k, v in rewrite(load_file(weights)).items()}, weights)
    report = import_hf(tmp_path / "hf", tmp_path / "run")
    with torch.no_grad():
        ours, theirs = RunFolder(tmp_path / "run").load_model()(ids()), hf(ids()).logits
    assert torch.allclose(ours, theirs, atol=1e-4)
    if model_type == "bert":
        assert any("pooler" in line for line in report.left_out)


# ------------------------------------------------------------------ Qwen2 sliding-window rule
def qwen2(**window):
    return transformers.Qwen2Config(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=48, bos_token_id=None, eos_token_id=None,
        **window)


def save_qwen2(folder, config, keep_layer_types=True):
    torch.manual_seed(0)
    hf = perturbed(transformers.AutoModelForCausalLM.from_config(config), seed=5)
    hf.save_pretrained(folder)
    saved = json.loads((folder / "config.json").read_text())
    if not keep_layer_types:  # configs written before transformers had layer_types
        del saved["layer_types"]
        (folder / "config.json").write_text(json.dumps(saved))
    return hf


@pytest.mark.parametrize("keep_layer_types", [True, False])
@pytest.mark.parametrize("max_window_layers,expected_window", [(28, 0), (2, 0), (0, 4)])
def test_qwen2_sliding_window_follows_transformers_rule(tmp_path, keep_layer_types,
                                                        max_window_layers, expected_window):
    """use_sliding_window with max_window_layers >= the 2 layers: HF slides on none of them;
    max_window_layers 0: on all. A 12-token input is longer than the 4-token window, so a
    window where HF has none (or none where it has one) changes the logits."""
    config = qwen2(use_sliding_window=True, sliding_window=4, max_window_layers=max_window_layers)
    sliding = [kind == "sliding_attention" for kind in config.layer_types]
    assert sliding == [expected_window > 0] * 2  # the rule, as transformers applies it
    hf = save_qwen2(tmp_path / "hf", config, keep_layer_types)
    import_hf(tmp_path / "hf", tmp_path / "run")
    run = RunFolder(tmp_path / "run")
    windows = {node.params["window"] for _, node in run.graph().walk()
               if node.type == "attention"}
    assert windows == {expected_window}
    with torch.no_grad():
        ours, theirs = run.load_model()(ids()), hf(ids()).logits
    assert ours.std() > 0.1
    assert torch.allclose(ours, theirs, atol=1e-5), (ours - theirs).abs().max()


def test_qwen2_with_a_real_mix_of_windows_is_refused(tmp_path):
    hf_folder = tmp_path / "hf"
    save_qwen2(hf_folder, qwen2(use_sliding_window=True, sliding_window=4, max_window_layers=1),
               keep_layer_types=False)
    with pytest.raises(InteropError, match=r"sliding window on 1 of its 2 layers and full "
                                           r"attention on the others is not imported"):
        import_hf(hf_folder, tmp_path / "run")
    saved = json.loads((hf_folder / "config.json").read_text())
    saved["layer_types"] = ["sliding_attention", "full_attention"]
    (hf_folder / "config.json").write_text(json.dumps(saved))
    with pytest.raises(InteropError, match="1 of its 2 layers"):
        import_hf(hf_folder, tmp_path / "run")
    saved["layer_types"] = ["sliding_attention"]
    (hf_folder / "config.json").write_text(json.dumps(saved))
    with pytest.raises(InteropError, match="for each of the 2 layers"):
        import_hf(hf_folder, tmp_path / "run")


# ------------------------------------------------------------------ only files inside the folder
@pytest.mark.parametrize("shard", ["../outside.safetensors", "/etc/passwd",
                                   "sub/../../outside.safetensors"])
def test_import_reads_no_shard_outside_its_folder(tmp_path, shard):
    from safetensors.torch import save_file

    hf = tmp_path / "hf"
    save_qwen2(hf, qwen2())
    weights = hf / "model.safetensors"
    outside = tmp_path / "outside.safetensors"
    save_file({"model.embed_tokens.weight": torch.zeros(VOCAB, 32)}, outside)
    weights.unlink()
    (hf / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": {"model.embed_tokens.weight": shard}}))
    with pytest.raises(InteropError) as caught:
        import_hf(hf, tmp_path / "run")
    message = str(caught.value)
    assert f"shard {shard!r} is outside {hf}" in message and "\n" not in message
    assert not (tmp_path / "run").exists()


def test_shard_index_problems_are_one_line(tmp_path):
    hf = tmp_path / "hf"
    save_qwen2(hf, qwen2())
    index = hf / "model.safetensors.index.json"
    for text, fragment in (("{broken", "not a shard index"),
                           ('{"weight_map": {"a": 3}}', "not a shard index"),
                           ('{"weight_map": {"a": "model-2.safetensors"}}',
                            "shard 'model-2.safetensors' is missing from")):
        index.write_text(text)
        with pytest.raises(InteropError, match=fragment):
            import_hf(hf, tmp_path / "run")
