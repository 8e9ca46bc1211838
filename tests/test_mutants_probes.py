"""Direct tests written for the survivors of mutation testing (bench/mutation.py) over the
ablation, logit-lens and routing probes: the exact refusals, the edges of every range, the
loss and the top tokens recomputed here from the model's own logits."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.data.corpus import Corpus, load_corpus
from tfstudio.data.tasks import CopyTask
from tfstudio.presets import load_preset
from tfstudio.probes import attention_maps, default_probe_text, expert_routing, probe_inputs
from tfstudio.probes.ablation import Target, ablation_effect, parse_target, text_loss
from tfstudio.probes.inputs import FALLBACK_TEXT, max_positions
from tfstudio.probes.lens import logit_lens
from tfstudio.train.pipeline import fit_graph_to_tokenizer

from probe_models import TEXT, model_of

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def gpt(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    return model, probe_inputs(model, tokenizer, TEXT)


def block_of(model, name: str):
    return {".".join(map(str, k)): m for k, m in model.blocks()}[name]


def refusal(model, inputs, target) -> str:
    with pytest.raises(ValueError) as caught:
        ablation_effect(model, inputs, [target])
    return str(caught.value)


# ---------------------------------------------------------------- ablation targets
def test_an_unreadable_target_is_refused_with_the_forms_it_may_take(gpt):
    for text in ("layers.0.attn:head=x", "layers.0.attn:head", "layers.0.attn:head=1=2"):
        assert refusal(*gpt, text) == (
            f"cannot read the ablation target {text!r}; write BLOCK, BLOCK:head=H or "
            "BLOCK:expert=E (e.g. layers.0.attn:head=1)")


def test_an_unknown_block_is_refused_with_the_blocks_there_are(gpt, tokenizer):
    model, inputs = gpt
    assert refusal(model, inputs, "layers.0.norm_attn") == (
        "'layers.0.norm_attn' is not an attention, feed-forward or MoE block of this model; "
        "choose one of layers.0.attn, layers.0.ffn, layers.1.attn, layers.1.ffn")
    lstm = model_of("tiny-lstm", tokenizer)
    assert refusal(lstm, probe_inputs(lstm, tokenizer, TEXT), "rnn") == (
        "'rnn' is not an attention, feed-forward or MoE block of this model; this model has "
        "none to switch off (a recurrent model has no sublayers)")


def test_every_head_can_be_switched_off_and_no_other(gpt):
    model, inputs = gpt
    heads = block_of(model, "layers.0.attn").heads
    for head in (0, heads - 1):
        ablation_effect(model, inputs, [f"layers.0.attn:head={head}"])
    assert refusal(model, inputs, f"layers.0.attn:head={heads}") == (
        f"layers.0.attn has heads 0..{heads - 1}, not {heads}")


def test_every_expert_can_be_switched_off_and_no_other(tokenizer):
    model = model_of("tiny-mixtral", tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    n = block_of(model, "layers.0.moe").num_experts
    for expert in (0, n - 1):
        ablation_effect(model, inputs, [f"layers.0.moe:expert={expert}"])
    assert refusal(model, inputs, f"layers.0.moe:expert={n}") == (
        f"layers.0.moe has experts 0..{n - 1}, not {n}")
    assert refusal(model, inputs, "layers.0.attn:expert=0") == (
        "layers.0.attn is not a mixture of experts")


# ---------------------------------------------------------------- the effect
def test_the_effect_reports_what_it_compared(gpt, tokenizer):
    model, inputs = gpt
    T = len(inputs.ids[inputs.stream_role])
    effect = ablation_effect(model, inputs, [" layers.0.attn:head=1 ", Target("layers.1.ffn")])
    assert effect.targets == ["layers.0.attn:head=1", "layers.1.ffn"]
    assert effect.position == T - 1
    before = torch.log_softmax(torch.tensor(effect.logits_before[T - 1]), -1)
    probs, ids = before.exp().topk(5)       # k's default: five tokens
    assert [name for name, _ in effect.top_before] == [str(i) for i in ids.tolist()]
    np.testing.assert_allclose([p for _, p in effect.top_before], probs.numpy(), rtol=1e-5)
    named = ablation_effect(model, inputs, ["layers.1.ffn"], tokenizer=tokenizer, k=2)
    assert [name for name, _ in named.top_before] == tokenizer.token_strings(ids[:2].tolist())


def test_the_compared_position_may_be_any_of_the_text(gpt):
    model, inputs = gpt
    T = len(inputs.ids[inputs.stream_role])
    assert ablation_effect(model, inputs, ["layers.1.ffn"], position=-T).position == 0
    assert ablation_effect(model, inputs, ["layers.1.ffn"], position=T - 1).position == T - 1
    for outside in (T, -T - 1):
        with pytest.raises(ValueError) as caught:
            ablation_effect(model, inputs, ["layers.1.ffn"], position=outside)
        assert str(caught.value) == f"position {outside} is outside the text's {T} tokens"


def test_the_text_loss_of_a_decoder_and_of_an_encoder(gpt, tokenizer):
    model, inputs = gpt
    ids = inputs.ids[inputs.stream_role]
    with torch.no_grad():
        logits = model(*inputs.args)
    expected = F.cross_entropy(logits[0, :-1], torch.tensor(ids[1:]))  # next tokens
    assert text_loss(model, inputs, logits) == pytest.approx(float(expected), rel=1e-6)
    short = probe_inputs(model, tokenizer, "ab")
    with torch.no_grad():
        two = model(*short.args)
    assert text_loss(model, short, two) == pytest.approx(
        float(F.cross_entropy(two[0, :1], torch.tensor(short.ids["tokens"][1:]))), rel=1e-6)
    one = probe_inputs(model, tokenizer, "a")
    with torch.no_grad():
        assert np.isnan(text_loss(model, one, model(*one.args)))   # no next token to predict
    bert = model_of("tiny-bert", tokenizer)
    b_inputs = probe_inputs(bert, tokenizer, TEXT)
    with torch.no_grad():
        b_logits = bert(*b_inputs.args)
    own = F.cross_entropy(b_logits[0], torch.tensor(b_inputs.ids[b_inputs.stream_role]))
    assert text_loss(bert, b_inputs, b_logits) == pytest.approx(float(own), rel=1e-6)


# ---------------------------------------------------------------- the logit lens
def test_the_lens_without_a_tokenizer_names_ids_and_keeps_no_logits(gpt, tokenizer):
    model, _ = gpt
    inputs = probe_inputs(model, tokenizer, "abc")   # fewer positions than k
    lens = logit_lens(model, inputs)   # k's default: the five likeliest
    ids = inputs.ids[inputs.stream_role]
    assert lens.tokens == [str(i) for i in ids] and lens.logits is None
    assert lens.top_ids.dtype == np.int64 and lens.top_ids.shape[-1] == 5
    assert lens.top_tokens[-1][0] == [str(i) for i in lens.top_ids[-1, 0]]
    with torch.no_grad():
        probs = torch.softmax(model(*inputs.args)[0], -1)
    np.testing.assert_array_equal(lens.top_ids[-1], probs.topk(5, -1).indices.numpy())


# ---------------------------------------------------------------- routing
def test_routing_gives_each_blocks_load_assignments_and_expert_count(tokenizer):
    model = model_of("tiny-mixtral", tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    with torch.no_grad():
        model(*inputs.args)
    routing = expert_routing(model)
    assert sorted(routing) == ["layers.0.moe", "layers.1.moe"]
    moe = block_of(model, "layers.0.moe")
    block = routing["layers.0.moe"]
    assert block["experts"] == moe.num_experts
    assert block["assignments"].dtype == np.int64
    T = len(inputs.ids[inputs.stream_role])
    counts = np.bincount(block["assignments"].ravel(), minlength=moe.num_experts)
    np.testing.assert_allclose(block["load"], counts / T, rtol=1e-6)  # shares, sum top_k


def test_the_effect_as_json(gpt):
    import json
    model, inputs = gpt
    effect = ablation_effect(model, inputs, ["layers.0.attn:head=1"], k=2)
    data = json.loads(json.dumps(effect.to_dict()))
    assert data == {
        "targets": ["layers.0.attn:head=1"], "position": effect.position,
        "loss_before": effect.loss_before, "loss_after": effect.loss_after,
        "loss_change": effect.loss_after - effect.loss_before, "kl": effect.kl,
        "top_before": [list(t) for t in effect.top_before],
        "top_after": [list(t) for t in effect.top_after]}
    assert data["loss_change"] != 0 and data["kl"] > 0  # switching a head off changed both


def test_the_lens_as_json(gpt, tokenizer):
    import json
    model, inputs = gpt
    lens = logit_lens(model, inputs, tokenizer, k=2)
    data = json.loads(json.dumps(lens.to_dict()))
    assert data == {"layers": lens.layers, "tokens": lens.tokens,
                    "top_ids": lens.top_ids.tolist(),
                    "top_probs": [[[float(p) for p in pos] for pos in layer]
                                  for layer in lens.top_probs],
                    "top_tokens": lens.top_tokens}
    assert data["layers"] == ["pos", "layers.0", "layers.1"]


def test_an_attention_map_round_trips_through_plain_data(tokenizer):
    """The snapshot file stores each map as plain lists (JSON): reading it back gives the same
    weights, mask, roles and cross flag."""
    import json
    from tfstudio.probes import attention_maps
    from tfstudio.probes.attention import AttentionMap
    model = model_of("tiny-t5", tokenizer)
    maps = attention_maps(model, probe_inputs(model, tokenizer, TEXT))
    assert any(m.cross for m in maps.values()) and not all(m.cross for m in maps.values())
    for name, original in maps.items():
        data = {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                for k, v in original.to_dict().items()}
        assert sorted(data) == ["allowed", "cross", "key_role", "query_role", "weights"]
        back = AttentionMap.from_dict(json.loads(json.dumps(data)))
        np.testing.assert_allclose(back.weights, original.weights, rtol=1e-6)
        assert original.allowed.dtype == bool and back.allowed.dtype == bool
        np.testing.assert_array_equal(back.allowed, original.allowed)
        assert (back.query_role, back.key_role, back.cross) == (
            original.query_role, original.key_role, original.cross)
        assert type(back.cross) is bool and type(back.query_role) is str


# ---------------------------------------------------------------- models edited for one test
def edited(preset: str, tokenizer, edit):
    graph = fit_graph_to_tokenizer(load_preset(preset), tokenizer)
    edit(graph)
    torch.manual_seed(0)
    return compile_graph(graph).eval()


def one_layer(graph):
    graph.nodes["layers"].params["repeat"] = 1


# ---------------------------------------------------------------- probe inputs
def test_an_empty_probe_text_is_refused_with_what_to_type(gpt, tokenizer):
    model, _ = gpt
    for text in ("", "  \n"):
        with pytest.raises(ValueError) as caught:
            probe_inputs(model, tokenizer, text)
        assert str(caught.value) == (
            "the probe text is empty; type a few words (or a task example such as "
            "abcdefgh>hgfedcba) to look inside the model")


def test_the_probe_may_be_a_single_token(gpt, tokenizer):
    model, _ = gpt
    inputs = probe_inputs(model, tokenizer, "abc", max_tokens=1)
    assert inputs.ids == {"tokens": tokenizer.encode("abc")[:1]}
    assert inputs.args[0].dtype == torch.long and inputs.args[0].shape == (1, 1)


def test_only_a_learned_table_limits_the_positions(gpt, tokenizer):
    model, _ = gpt
    learned = [m for _, m in model.blocks() if getattr(m, "scheme", None) == "learned"]
    assert max_positions(model) == learned[0].max_len == 256   # tiny-gpt's table
    t5 = model_of("tiny-t5", tokenizer)      # sinusoidal positions: max_len is no limit
    assert [m.max_len for _, m in t5.blocks() if getattr(m, "scheme", None) == "sinusoidal"]
    assert max_positions(t5) is None
    inputs = probe_inputs(t5, tokenizer, "a" * 300 + ">b", max_tokens=400)
    assert len(inputs.ids["source"]) == 300


def test_an_encoder_decoder_reads_the_text_split_at_the_first_separator_or_in_half(tokenizer):
    t5 = model_of("tiny-t5", tokenizer)
    bos, enc = tokenizer.bos_id, tokenizer.encode
    for text, source, target in [("ab>cd>ef", "ab", "cd>ef"),    # only the first separator
                                 ("abcdef", "abc", "def"),       # none: in half
                                 ("abcde", "ab", "cde")]:
        inputs = probe_inputs(t5, tokenizer, text)
        assert inputs.ids == {"source": enc(source), "target": [bos] + enc(target)}, text
        assert [a[0].tolist() for a in inputs.args] == [enc(source), [bos] + enc(target)]
    custom = probe_inputs(t5, tokenizer, "ab|cd>e", separator="|")
    assert custom.ids["source"] == enc("ab") and custom.ids["target"] == [bos] + enc("cd>e")


# ---------------------------------------------------------------- the default probe text
def corpus_of(*documents, task=None):
    """A corpus whose documents arrive in the given chunks."""
    return Corpus("test", "test", "task" if task else "file", "", 0,
                  lambda: iter([iter(chunks) for chunks in documents]), task)


def test_the_default_text_without_a_corpus_is_the_pangram():
    assert default_probe_text() == default_probe_text(None) == FALLBACK_TEXT
    assert default_probe_text(corpus_of()) == FALLBACK_TEXT          # no documents
    assert default_probe_text(corpus_of(["  ", "\n"])) == FALLBACK_TEXT  # only blanks


def test_the_default_text_of_a_task_is_one_fixed_example_without_its_newline():
    text = default_probe_text(load_corpus("task:reverse"))
    source, target = text.split(">")
    assert target == source[::-1] and not text.endswith("\n")
    assert all(default_probe_text(load_corpus("task:reverse")) == text for _ in range(3))
    assert default_probe_text(load_corpus("task:copy:letters=X")) == "X" * 7 + ">" + "X" * 7
    spaces = corpus_of(task=CopyTask(letters=" "))   # only the newline is taken off
    assert default_probe_text(spaces) == " " * 7 + ">" + " " * 7


def test_the_default_text_of_a_corpus_is_its_opening_words_cut_at_a_word():
    words = "the cat sat on the mat and then the dog came in to see what was there"
    # 48 characters: "the cat sat on the mat and then the dog came in " -> cut after "in"
    assert default_probe_text(corpus_of([words])) == words[:47]
    assert len(words[:47]) == 47 and words[47] == " "
    # the chunks of a document join: "the cat sa" + "t on ..."
    assert default_probe_text(corpus_of([words[:10], words[10:]])) == words[:47]
    assert default_probe_text(corpus_of([words]), max_chars=10) == "the cat"
    # the last space is in the first half: the cut is kept whole (no word cut shorter)
    one_word = "a " + "b" * 60
    assert default_probe_text(corpus_of([one_word])) == one_word[:48]
    assert default_probe_text(corpus_of(["abc de" + "f" * 10]), max_chars=9) == "abc defff"
    assert default_probe_text(corpus_of(["abcde fghij"]), max_chars=9) == "abcde"
    # the cut is at the last space: what comes before it stays as it is
    assert default_probe_text(corpus_of(["ab cd ef gh"]), max_chars=8) == "ab cd"
    assert default_probe_text(corpus_of(["ab cd  efgh"]), max_chars=9) == "ab cd "
    assert default_probe_text(corpus_of(["  short text  "])) == "short text"
    # a first document blank within its first 4 x max_chars characters is skipped
    blank_start = " " * 192 + "hidden words"
    assert default_probe_text(corpus_of([blank_start], ["next document"])) == "next document"
    assert default_probe_text(corpus_of([" " * 191 + "x"], ["next"])) == "x"
    # ... counted across the document's chunks: 150 + 42 characters are read, the rest not
    assert default_probe_text(corpus_of([" " * 150, " " * 30 + "x" * 100])) == "x" * 12
    assert default_probe_text(corpus_of([" " * 100, " " * 100, "late words"],
                                        ["next"])) == "next"


# ---------------------------------------------------------------- attention maps
def test_every_map_has_a_mask_of_its_own_queries_by_keys(tokenizer):
    t5 = model_of("tiny-t5", tokenizer)
    inputs = probe_inputs(t5, tokenizer, TEXT)
    S, T = len(inputs.ids["source"]), len(inputs.ids["target"])
    assert S != T
    maps = attention_maps(t5, inputs)
    for name, amap in maps.items():
        assert amap.allowed.shape == amap.weights.shape[1:], name
    cross = [m for m in maps.values() if m.cross]
    assert cross and all(m.weights.shape[1:] == (T, S) and m.allowed.all() for m in cross)


def test_a_one_head_alibi_model_shows_its_causal_mask(tokenizer):
    def one_head(graph):
        graph.nodes["layers"].subgraph.nodes["attn"].params.update(heads=1, kv_heads=1)
    model = edited("tiny-alibi-gpt", tokenizer, one_head)
    inputs = probe_inputs(model, tokenizer, TEXT)
    T = len(inputs.ids["tokens"])
    maps = attention_maps(model, inputs)
    assert sorted(maps) == ["layers.0.attn", "layers.1.attn"]
    for amap in maps.values():
        assert amap.weights.shape == (1, T, T)
        np.testing.assert_array_equal(amap.allowed, np.tril(np.ones((T, T), dtype=bool)))


def test_a_model_without_its_graph_labels_every_map_with_its_last_input(gpt, tokenizer):
    model, inputs = gpt
    t5 = model_of("tiny-t5", tokenizer)
    for m, expected in ((model, "tokens"), (t5, "target")):
        saved = m.graph
        try:
            m.graph = None          # a standalone export carries no graph
            maps = attention_maps(m, probe_inputs(m, tokenizer, TEXT))
        finally:
            m.graph = saved
        assert maps and all((a.query_role, a.key_role) == (expected, expected)
                            for a in maps.values())


def test_a_graph_that_does_not_hold_the_blocks_labels_them_with_the_default(gpt):
    from tfstudio.graph import Graph
    model, inputs = gpt
    saved = model.graph
    try:
        model.graph = Graph()       # no group "layers" to follow the wires in
        maps = attention_maps(model, inputs)
    finally:
        model.graph = saved
    assert maps and all((a.query_role, a.key_role) == ("tokens", "tokens")
                        for a in maps.values())


def test_only_the_modules_that_captured_are_read(gpt):
    from tfstudio.probes._util import looking_at
    from tfstudio.probes.attention import read_attention
    model, inputs = gpt
    modules = dict(model.attention_modules())
    first, second = modules[("layers", 0, "attn")], modules[("layers", 1, "attn")]
    with looking_at(model):
        second.capture = True       # the first layer's attention keeps no weights
        model(*inputs.args)
        assert first.last_weights is None
        maps = read_attention(model)
    assert sorted(maps) == ["layers.1.attn"]


def test_a_map_read_back_from_zeros_and_ones_has_a_boolean_mask():
    from tfstudio.probes.attention import AttentionMap
    back = AttentionMap.from_dict({"weights": [[[1.0, 0.0], [0.5, 0.5]]],
                                   "allowed": [[1, 0], [1, 1]], "query_role": "tokens",
                                   "key_role": "tokens", "cross": 0})
    assert back.allowed.dtype == bool
    np.testing.assert_array_equal(~back.allowed, [[False, True], [False, False]])


# ---------------------------------------------------------------- roles (pure graph code)
def graph_of(nodes, edges):
    from tfstudio.graph import Graph
    from tfstudio.graph.model import Edge, Node
    graph = Graph()
    for node_id, kind, params, *inside in nodes:
        node = Node(node_id, kind, dict(params))
        if inside:
            node.subgraph = graph_of(*inside[0]) if inside[0] is not None else None
        graph.add_node(node)
    for src, src_port, dst, dst_port in edges:
        graph.add_edge(Edge(src, src_port, dst, dst_port))
    return graph


def group_of(inner_nodes, inner_edges):
    """A group body reading x and writing y: inputs -> ... -> outputs."""
    return ([("inputs", "group_input", {"ports": "x:hidden"}),
             ("outputs", "group_output", {"ports": "y:hidden"}), *inner_nodes], inner_edges)


def test_a_block_key_names_its_groups_and_its_node():
    from tfstudio.probes.roles import split_key
    assert split_key(("embed",)) == ((), "embed")
    assert split_key(("layers", 0, "attn")) == (("layers",), "attn")
    assert split_key(("enc", 0, "layers", 1, "attn")) == (("enc", "layers"), "attn")


def test_roles_are_traced_out_of_nested_groups():
    from tfstudio.probes.roles import stream_roles
    inner = group_of([("attn", "attention", {})],
                     [("inputs", "x", "attn", "x"), ("attn", "y", "outputs", "y")])
    outer = group_of([("inner", "group", {"repeat": 1}, inner)],
                     [("inputs", "x", "inner", "x"), ("inner", "y", "outputs", "y")])
    root = graph_of([("src", "token_input", {"role": "source"}),
                     ("embed", "token_embedding", {}),
                     ("outer", "group", {"repeat": 1}, outer)],
                    [("src", "ids", "embed", "ids"), ("embed", "y", "outer", "x")])
    key = ("outer", 0, "inner", 0, "attn")
    assert stream_roles(root, key, False, "target") == ("source", "source")


def test_roles_are_traced_into_a_group_through_its_outputs():
    from tfstudio.probes.roles import stream_roles
    body = group_of([("norm", "norm", {})],
                    [("inputs", "x", "norm", "x"), ("norm", "y", "outputs", "y")])
    root = graph_of([("src", "token_input", {"role": "source"}),
                     ("embed", "token_embedding", {}),
                     ("enc", "group", {"repeat": 2}, body),
                     ("hollow", "group", {"repeat": 1}, None),   # no body to enter
                     ("attn", "attention", {}), ("attn2", "attention", {})],
                    [("src", "ids", "embed", "ids"), ("embed", "y", "enc", "x"),
                     ("enc", "y", "attn", "x"), ("hollow", "y", "attn2", "x")])
    assert stream_roles(root, ("attn",), False, "target") == ("source", "source")
    assert stream_roles(root, ("attn2",), False, "target") == ("target", "target")


def test_cross_attention_keys_follow_the_memory_wire_else_the_source():
    from tfstudio.probes.roles import stream_roles
    root = graph_of([("tgt", "token_input", {"role": "target"}),
                     ("embed", "token_embedding", {}),
                     ("cross", "cross_attention", {}), ("lone", "cross_attention", {})],
                    [("tgt", "ids", "embed", "ids"), ("embed", "y", "cross", "x"),
                     ("embed", "y", "cross", "memory"), ("embed", "y", "lone", "x")])
    assert stream_roles(root, ("cross",), True, "tokens") == ("target", "target")
    assert stream_roles(root, ("lone",), True, "tokens") == ("target", "source")


def test_the_repeated_sequence_and_its_refusals():
    from tfstudio.probes.roles import repeated_sequence
    assert repeated_sequence([5, 6, 7], 3) == repeated_sequence([5, 6, 7], 3, seed=0)
    pair = repeated_sequence([5, 6, 7], 2)
    assert len(pair) == 4 and pair[:2] == pair[2:] and len(set(pair[:2])) == 2
    small = repeated_sequence([5, 6], 5)          # more tokens than the pool: repeats allowed
    assert len(small) == 10 and small[:5] == small[5:] and set(small) <= {5, 6}
    with pytest.raises(ValueError) as caught:
        repeated_sequence([], 4)
    assert str(caught.value) == "the token pool for the head scores is empty"
    with pytest.raises(ValueError) as caught:
        repeated_sequence([1, 2], 1)
    assert str(caught.value) == "the repeated sequence needs at least 2 tokens per half; got 1"


def test_head_scores_by_hand():
    from tfstudio.probes.roles import scores_from_weights
    # one head, half = 2, T = 4 (no prefix): rows of attention weights chosen by hand
    w = np.array([[[1.0, 0, 0, 0],
                   [0.6, 0.4, 0, 0],
                   [0.1, 0.2, 0.7, 0],
                   [0.25, 0.25, 0.3, 0.2]]])
    scores = scores_from_weights(w, 2)
    # previous token: rows 1..3 on keys 0..2 = 0.6, 0.2, 0.3
    np.testing.assert_allclose(scores["previous_token"], [(0.6 + 0.2 + 0.3) / 3])
    # induction: rows 2..3 on keys i - 2 + 1 = 1, 2: 0.2, 0.3
    np.testing.assert_allclose(scores["induction"], [(0.2 + 0.3) / 2])
    assert scores["induction"].dtype == np.float64


def test_head_scores_defaults_are_twenty_tokens_of_seed_zero(gpt):
    from tfstudio.probes.roles import head_scores
    model, _ = gpt
    pool = list(range(97, 123))
    default = head_scores(model, pool)
    explicit = head_scores(model, pool, length=20, seed=0)
    assert sorted(default) == ["layers.0.attn", "layers.1.attn"]
    for name in default:
        for score in ("previous_token", "induction"):
            np.testing.assert_array_equal(default[name][score], explicit[name][score])
    other = head_scores(model, pool, length=21, seed=1)
    assert not np.array_equal(other["layers.0.attn"]["induction"],
                              default["layers.0.attn"]["induction"])


# ---------------------------------------------------------------- telemetry
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


# ---------------------------------------------------------------- the lens's rows
def test_the_lens_of_a_one_layer_model(tokenizer):
    model = edited("tiny-gpt", tokenizer, one_layer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    lens = logit_lens(model, inputs, keep_logits=True)
    assert lens.layers == ["pos", "layers.0"]
    with torch.no_grad():
        np.testing.assert_allclose(lens.logits[-1], model(*inputs.args)[0].numpy(),
                                   rtol=1e-5, atol=1e-5)


def test_the_lens_needs_an_output_head(gpt):
    from tfstudio.probes.lens import residual_stream
    model, inputs = gpt
    saved = model.head
    try:
        model.head = torch.nn.Linear(64, 256)   # a plain projection, not an LM head
        with pytest.raises(ValueError) as caught:
            residual_stream(model, inputs)
    finally:
        model.head = saved
    assert str(caught.value) == "the model has no output head to read the stream through"


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


def lens_rows(model, tokenizer, text=TEXT):
    """The lens's row labels, and its last row checked against the model's own logits."""
    inputs = probe_inputs(model, tokenizer, text)
    lens = logit_lens(model, inputs, keep_logits=True)
    with torch.no_grad():
        np.testing.assert_allclose(lens.logits[-1], model(*inputs.args)[0].numpy(),
                                   rtol=1e-5, atol=1e-5)
    return lens.layers


def test_the_lens_of_a_model_whose_first_group_reads_the_ids(tokenizer):
    """A group holding the embedding is the first block to run: there is no stream before it to
    read (its input is the token ids), so the lens starts after it (it once sent the ids through
    the final norm and failed)."""
    model = graph_file([TOKENS, {"id": "stem", "type": "group", "params": {"repeat": 1},
                                 "subgraph": STEM},
                        {"id": "norm", "type": "norm", "params": {}}, HEAD],
                       [["tokens", "ids", "stem", "ids"], ["stem", "y", "norm", "x"],
                        ["norm", "y", "head", "x"]])
    assert lens_rows(model, tokenizer) == ["stem.0"]
    # a block after the group: no layers group ends the stream, so every top-level block
    # (there is no top-level embedding) is a row
    model = graph_file([TOKENS, {"id": "stem", "type": "group", "params": {"repeat": 1},
                                 "subgraph": STEM},
                        {"id": "ffn", "type": "feed_forward", "params": {"d_ff": 32}},
                        {"id": "norm", "type": "norm", "params": {}}, HEAD],
                       [["tokens", "ids", "stem", "ids"], ["stem", "y", "ffn", "x"],
                        ["ffn", "y", "norm", "x"], ["norm", "y", "head", "x"]])
    assert lens_rows(model, tokenizer) == ["stem.0", "ffn"]


def test_the_lens_rows_of_each_kind_of_model(tokenizer):
    assert lens_rows(model_of("tiny-lstm", tokenizer), tokenizer) == ["embed", "rnn"]
    assert lens_rows(model_of("tiny-llama", tokenizer), tokenizer) == [
        "embed", "layers.0", "layers.1"]        # the layers start right after the embedding
    # an encoder-decoder: the decoder's layers only (the encoder's run before them)
    assert lens_rows(model_of("tiny-t5", tokenizer), tokenizer) == [
        "tgt_pos", "decoder.0", "decoder.1"]


def test_the_lens_of_an_encoder_decoder_without_groups_reads_the_decoder(tokenizer):
    nodes = [{"id": "src", "type": "token_input", "params": {"role": "source"}},
             {"id": "src_embed", "type": "token_embedding", "params": {"d_model": 64}},
             {"id": "tgt", "type": "token_input", "params": {"role": "target"}},
             {"id": "tgt_embed", "type": "token_embedding", "params": {"d_model": 64}},
             {"id": "cross", "type": "cross_attention", "params": {"heads": 4}},
             {"id": "norm", "type": "norm", "params": {}},
             {"id": "head", "type": "seq2seq_head", "params": {"vocab_size": 256, "tie": False}}]
    edges = [["src", "ids", "src_embed", "ids"], ["tgt", "ids", "tgt_embed", "ids"],
             ["tgt_embed", "y", "cross", "x"], ["src_embed", "y", "cross", "memory"],
             ["cross", "y", "norm", "x"], ["norm", "y", "head", "x"]]
    model = graph_file(nodes, edges)
    assert model.family == "encoder-decoder"
    # rows from the last embedding (the target's): the source has another length
    assert lens_rows(model, tokenizer, "abcdefgh>xyz") == ["tgt_embed", "cross"]


# ---------------------------------------------------------------- positions
def llama_rope(**params):
    def edit(graph):
        graph.nodes["layers"].subgraph.nodes["attn"].params.update(params)
    return edited("tiny-llama", build_tokenizer("byte"), edit)


def test_the_rope_probe_follows_ntk_scaling():
    from tfstudio.probes import position_data, rope_score
    model = llama_rope(rope_base=500.0, rope_scaling=2.0, rope_scaling_type="ntk")
    rope = position_data(model, 12)["rope"]
    hd = 2 * len(rope["frequencies"])
    # NTK-aware: positions kept, the base raised to base * s^(d / (d - 2))
    base = 500.0 * 2.0 ** (hd / (hd - 2))
    w = base ** (-np.arange(0, hd, 2) / hd)
    np.testing.assert_allclose(rope["frequencies"], w, rtol=1e-5)
    assert rope["scaling_type"] == "ntk" and rope["scaling"] == 2.0
    # two all-ones vectors at positions m and n: sum_k 2 cos((m - n) w_k) / d
    np.testing.assert_allclose(rope["scores"], [2 * np.cos(m * w).sum() / hd for m in range(12)],
                               rtol=1e-4, atol=1e-5)
    module = next(m for _, m in model.attention_modules())
    q = torch.ones(hd)
    assert rope_score(module, q, q, 5, 2) == pytest.approx(2 * np.cos(3 * w).sum(), rel=1e-4)


def test_only_a_learned_table_reads_the_rows_asked_for(gpt, tokenizer):
    from tfstudio.probes import position_data
    model, _ = gpt
    learned = position_data(model, 8, table_rows=20)["learned"]
    assert learned["table"].shape == (20, 64) and learned["similarity"].shape == (20, 20)
    assert position_data(model, 8)["learned"]["table"].shape == (8, 64)
    t5 = model_of("tiny-t5", tokenizer)
    sinusoidal = position_data(t5, 8, table_rows=20)["sinusoidal"]
    assert sinusoidal["table"].shape == (8, 64)      # a formula has no rows of its own


# ---------------------------------------------------------------- snapshots
def test_a_snapshot_holds_what_the_views_draw(gpt, tokenizer):
    from tfstudio.probes import take_snapshot
    model, _ = gpt
    snap = take_snapshot(model, tokenizer, "abcab")
    assert sorted(snap) == ["activation_rms", "attention", "experts", "family", "grad_norm",
                            "ids", "next_token_logits", "positions", "step", "text",
                            "tokens"]
    assert snap["step"] == 0 and snap["family"] == "decoder" and snap["text"] == "abcab"
    assert snap["ids"]["tokens"].tolist() == tokenizer.encode("abcab")
    with torch.no_grad():
        logits = model(torch.tensor([tokenizer.encode("abcab")]))
    np.testing.assert_allclose(snap["next_token_logits"], logits[0, -1].numpy(), rtol=1e-5,
                               atol=1e-6)
    # the positions view: a learned table with all its rows, its similarity the text's length
    learned = snap["positions"]["learned"]
    assert learned["table"].shape == (256, 64) and learned["similarity"].shape == (5, 5)


def test_an_encoder_decoder_snapshot_splits_at_the_separator(tokenizer):
    from tfstudio.probes import take_snapshot
    from tfstudio.probes.snapshot import shown_positions
    t5 = model_of("tiny-t5", tokenizer)
    enc = tokenizer.encode
    snap = take_snapshot(t5, tokenizer, "abc>d")
    assert snap["ids"]["source"].tolist() == enc("abc")
    bar = take_snapshot(t5, tokenizer, "ab|c>d", separator="|")
    assert bar["ids"]["source"].tolist() == enc("ab")
    assert snap["positions"]["sinusoidal"]["table"].shape == (3, 64)   # the longer stream
    assert shown_positions(t5, 16)["sinusoidal"]["table"].shape == (16, 64)


def test_the_snapshot_store_refusals_and_its_latest(tmp_path):
    from tfstudio.probes import SnapshotStore
    store = SnapshotStore(tmp_path / "new" / "run")      # no folder yet: save makes it
    assert store.latest() is None and store.steps() == []
    with pytest.raises(FileNotFoundError) as caught:
        store.load(3)
    assert str(caught.value) == f"{store.path(3)}: no snapshot of step 3 in this run"
    for step in (5, 2, 3):
        store.save({"step": step, "value": np.float32(step / 2), "nested": {"x": np.ones(2)}})
    latest = store.latest()
    assert latest["step"] == 5 and latest["value"] == 2.5
    np.testing.assert_array_equal(latest["nested"]["x"], np.ones(2))
    with pytest.raises(ValueError) as caught:
        store.save({"step": 1, "a/b": 1})
    assert str(caught.value) == "snapshot key 'a/b' may not contain '/'"
    store.path(7).write_bytes(b"not a zip file")
    with pytest.raises(ValueError) as caught:
        store.load(7)
    message = str(caught.value)
    assert message.startswith(f"{store.path(7)} is not a readable probe snapshot (")
    assert message.endswith("); it may be damaged: delete it and the view skips that step")


def trained(preset: str, tmp_path, **config):
    """A trainer after its steps (one unless told; its pipeline and model set up)."""
    from tfstudio.runs import TrainConfig
    from tfstudio.train.trainer import Trainer
    import tfstudio
    cfg = TrainConfig(**{"tokenizer": "byte", "steps": 1, "batch_size": 2, "seq_len": 32,
                         "eval_every": 100, "log_every": 1, **config})
    trainer = Trainer(tfstudio.load_graph(preset), cfg, run_dir=tmp_path / "run")
    assert trainer.run().kind == "Finished"
    return trainer


def test_a_run_probes_its_tasks_default_example_split_at_the_tasks_separator(tmp_path):
    from tfstudio.probes import SnapshotStore, snapshot_for_run
    trainer = trained("tiny-t5", tmp_path, corpus="task:add")
    text = default_probe_text(load_corpus("task:add"))
    source, target = text.split("=")                    # the add task's separator
    snap = snapshot_for_run(trainer)
    enc = trainer.tokenizer.encode
    assert snap["text"] == text and snap["ids"]["source"].tolist() == enc(source)
    assert snap["ids"]["target"].tolist() == [trainer.tokenizer.bos_id] + enc(target)
    assert snap["step"] == 1
    assert SnapshotStore(trainer.run_folder.path).steps() == [1]     # the main writer saves
    # the positions view: the run's sequence length, not the probe text's
    assert snap["positions"]["sinusoidal"]["table"].shape == (32, 64)
    # the default text is worked out once and kept
    trainer._default_probe_text = "xy=z"
    assert snapshot_for_run(trainer)["text"] == "xy=z"
    trainer.config.probe_text = "a" * 80     # no separator: halves of 40, cut to seq_len 32
    assert len(snapshot_for_run(trainer)["ids"]["source"]) == 32
    store = SnapshotStore(trainer.run_folder.path)
    store.path(1).unlink()
    trainer.writes = False        # not the writing process: nothing is saved
    snapshot_for_run(trainer)
    assert store.steps() == []


def test_a_typed_probe_text_splits_at_the_default_separator_when_the_task_has_none(tmp_path):
    from tfstudio.probes import snapshot_for_run
    enc = build_tokenizer("byte").encode
    for corpus in ("task:induction", "sample"):          # an empty separator; no task at all
        trainer = trained("tiny-t5", tmp_path / corpus.replace(":", "_"), corpus=corpus,
                          probe_text="abc>d")
        snap = snapshot_for_run(trainer)
        assert snap["ids"]["source"].tolist() == enc("abc"), corpus


# ---------------------------------------------------------------- embeddings
def test_an_embedding_map_of_few_tokens_and_its_refusals(gpt, tokenizer):
    from tfstudio.probes import embedding_map
    model, _ = gpt
    two = embedding_map(model, [97, 98, 97])          # two distinct tokens are enough
    assert sorted(two) == ["coords", "explained", "ids", "labels", "neighbour_cosines",
                           "neighbours"]
    assert two["ids"].tolist() == [97, 98] and two["labels"] == ["97", "98"]
    assert two["neighbours"].tolist() == [[98], [97]] and two["coords"].shape == (2, 2)
    three = embedding_map(model, [97, 98, 99], neighbours=5)   # k: every other token
    assert three["neighbours"].shape == (3, 2) and three["neighbour_cosines"].shape == (3, 2)
    assert all(i not in row for i, row in zip([97, 98, 99], three["neighbours"].tolist()))
    for ids in ([97], [97, 97]):
        with pytest.raises(ValueError) as caught:
            embedding_map(model, ids)
        assert str(caught.value) == "an embedding map needs at least 2 distinct tokens"


def test_neighbours_that_tie_come_in_id_order(tokenizer):
    from tfstudio.probes import embedding_map
    model = model_of("tiny-gpt", tokenizer)
    with torch.no_grad():
        block_of(model, "embed").weight.fill_(1.0)     # every row the same: all cosines tie
    ids = list(range(40))
    result = embedding_map(model, ids, neighbours=5)
    for i, row in zip(ids, result["neighbours"].tolist()):
        assert row == [j for j in ids if j != i][:5]


def test_the_table_of_a_scaled_embedding_and_a_model_without_one(tokenizer):
    from tfstudio.probes.embeddings import embedding_table
    t5 = model_of("tiny-t5", tokenizer)            # its embeddings are scaled by sqrt(d)
    weight = block_of(t5, "tgt_embed").weight.detach().double().numpy()
    np.testing.assert_allclose(embedding_table(t5), weight * np.sqrt(64), rtol=1e-12)
    model = model_of("tiny-gpt", tokenizer)
    model.embed = torch.nn.Embedding(256, 64)      # a plain embedding, not a tfstudio block
    with pytest.raises(ValueError) as caught:
        embedding_table(model)
    assert str(caught.value) == "the model has no token embedding"


def test_cosines_of_a_zero_row_are_zero():
    from tfstudio.probes.embeddings import cosine_matrix
    a = np.array([[3.0, 4.0], [0.0, 0.0]])
    b = np.array([[0.0, 2.0], [0.0, 0.0], [1.0, 0.0]])
    np.testing.assert_allclose(cosine_matrix(a, b), [[0.8, 0.0, 0.6], [0.0, 0.0, 0.0]])


def test_pca_of_a_one_wide_embedding_pads_the_second_axis():
    from tfstudio.probes.embeddings import pca_2d
    coords, ratio = pca_2d(np.array([[1.0], [2.0], [6.0]]))     # mean 3
    assert coords.shape == (3, 2) and ratio.shape == (2,)
    np.testing.assert_allclose(np.abs(coords[:, 0]), [2.0, 1.0, 3.0])
    np.testing.assert_array_equal(coords[:, 1], 0.0)
    np.testing.assert_allclose(ratio, [1.0, 0.0])
    wide, wide_ratio = pca_2d(np.random.default_rng(0).normal(size=(6, 5)))
    assert wide.shape == (6, 2) and wide_ratio.shape == (2,)


def test_position_angles_by_default_and_for_sinusoids(tokenizer):
    from tfstudio.probes import position_angles
    model = model_of("tiny-gpt", tokenizer)
    angles = position_angles(model, [97, 98])
    assert angles["cosine"].shape == (2, 64) and angles["scheme"] == "learned"
    assert angles["mean_abs_cosine"] == pytest.approx(float(np.abs(angles["cosine"]).mean()))
    t5 = model_of("tiny-t5", tokenizer)
    assert position_angles(t5, [97, 98], length=8)["scheme"] == "sinusoidal"
    # token rows along and against position 0: 0 and 180 degrees, never NaN, though rounding
    # puts these two cosines at 1 + 2^-52 and -1 - 2^-52 (a vector found by search)
    v = torch.tensor(np.random.default_rng(1).normal(size=64), dtype=torch.float32)
    with torch.no_grad():
        block_of(model, "pos").table.weight[0] = v
        block_of(model, "embed").weight[97] = v
        block_of(model, "embed").weight[98] = -v
    extreme = position_angles(model, [97, 98], length=1)
    assert abs(extreme["cosine"]).max() > 1                  # the rounding the clip is for
    assert extreme["mean_angle_degrees"] == pytest.approx(90.0)


def test_the_same_token_through_the_layers_with_its_norms(gpt, tokenizer):
    from tfstudio.probes import token_through_layers
    from tfstudio.probes.embeddings import stream_vectors
    model, _ = gpt
    a = probe_inputs(model, tokenizer, "xab")
    b = probe_inputs(model, tokenizer, "cdab")
    result = token_through_layers(model, a, -3, b, 3)        # positions at both ends
    assert sorted(result) == ["cosine", "layers", "norm_a", "norm_b", "same_token"]
    _, va = stream_vectors(model, a, -3)
    _, vb = stream_vectors(model, b, 3)
    np.testing.assert_allclose(result["norm_a"], np.sqrt((va ** 2).sum(1)), rtol=1e-12)
    np.testing.assert_allclose(result["norm_b"], np.sqrt((vb ** 2).sum(1)), rtol=1e-12)
    assert result["same_token"] is False                     # "x" and "b"
    for p in (3, -4):
        with pytest.raises(ValueError) as caught:
            token_through_layers(model, a, p, b, 0)
        assert str(caught.value) == f"position {p} is outside a text of 3 tokens"


def test_the_replay_aligns_every_older_map_onto_the_latest(tmp_path, tokenizer):
    from tfstudio.probes import embedding_map, embedding_replay
    from tfstudio.runs import RunFolder, load_checkpoint
    trained("tiny-gpt", tmp_path, corpus="task:copy", steps=9, checkpoint_every=3,
            keep_checkpoints=3)
    folder = RunFolder(tmp_path / "run")
    (folder.checkpoints / "step-notes").mkdir()               # not a checkpoint: skipped
    (folder.checkpoints / "step-00000012").write_text("a file, not a folder")
    model = folder.load_model()
    ids = tokenizer.encode("abcdefgh")
    maps = embedding_replay(model, folder.path, ids, tokenizer, neighbours=2)
    assert [m["step"] for m in maps] == [3, 6, 9]
    latest = maps[-1]["coords"]
    for entry in maps:
        twin = folder.load_model()
        load_checkpoint(folder.checkpoints / f"step-{entry['step']:08d}", twin)
        own = embedding_map(twin, ids, tokenizer, neighbours=2)
        assert entry["labels"] == tokenizer.token_strings(ids)
        assert entry["neighbours"].shape == (len(ids), 2)
        # orthogonal Procrustes by its closed form (Schonemann 1966): the rotation R minimising
        # |A R - B| is U V^T from the SVD of A^T B; then the latest's mean is added back
        centred = own["coords"] - own["coords"].mean(0)
        u, _, vt = np.linalg.svd(centred.T @ (latest - latest.mean(0)))
        rotation = u @ vt
        np.testing.assert_allclose(entry["coords"], centred @ rotation + latest.mean(0),
                                   atol=1e-8)


# ---------------------------------------------------------------- the walk
def test_filtered_probabilities_by_hand():
    from tfstudio.probes.walk import filtered_probabilities
    logits = np.log([0.5, 0.3, 0.2])
    np.testing.assert_allclose(filtered_probabilities(logits), [0.5, 0.3, 0.2])  # defaults
    assert filtered_probabilities(logits.astype(np.float32)).dtype == np.float64
    np.testing.assert_allclose(filtered_probabilities(logits, top_k=1), [1, 0, 0])
    np.testing.assert_allclose(filtered_probabilities(logits, top_k=2), [0.625, 0.375, 0])
    # top-p: mass before each token 0, 0.5, 0.8; kept while it is under p (0.5 exactly: one)
    np.testing.assert_allclose(filtered_probabilities(logits, top_p=0.5), [1, 0, 0])
    np.testing.assert_allclose(filtered_probabilities(logits, top_p=0.51), [0.625, 0.375, 0])
    # top-p after top-k renormalised: 0.625, 0.375 -> under 0.6 only the first
    np.testing.assert_allclose(filtered_probabilities(logits, top_k=2, top_p=0.6), [1, 0, 0])
    # top-p 1 filters nothing, not even a token too unlikely to move the cumulative sum
    tiny = filtered_probabilities(np.array([0.0, -50.0]))
    assert tiny[1] == pytest.approx(np.exp(-50.0), rel=1e-9, abs=0)
    # temperature 0: the likeliest token only; 2: softmax(l / 2)
    np.testing.assert_allclose(filtered_probabilities(logits[::-1], temperature=0), [0, 0, 1])
    halved = np.sqrt([0.5, 0.3, 0.2])
    np.testing.assert_allclose(filtered_probabilities(logits, temperature=2),
                               halved / halved.sum())
    np.testing.assert_allclose(filtered_probabilities(logits, temperature=0.5),
                               np.array([0.25, 0.09, 0.04]) / 0.38)
    # the nucleus follows the probabilities, not the token order
    np.testing.assert_allclose(filtered_probabilities(np.log([0.2, 0.5, 0.3]), top_p=0.5),
                               [0, 1, 0])
    # ties: the nucleus takes the lowest ids first, among ties of several sizes
    mixed = np.log(np.random.default_rng(0).choice([1.0, 2.0, 3.0], size=100))
    p = np.exp(mixed) / np.exp(mixed).sum()
    order = sorted(range(100), key=lambda i: (-p[i], i))       # likeliest, then lowest id
    mass = np.cumsum(p[order]) - p[order]
    chosen = [i for i, m in zip(order, mass) if m < 0.3]
    expected = np.zeros(100)
    expected[chosen] = p[chosen] / p[chosen].sum()
    np.testing.assert_allclose(filtered_probabilities(mixed, top_p=0.3), expected)
    tied = filtered_probabilities(np.zeros(40), top_p=0.1)
    np.testing.assert_allclose(tied, [0.25] * 4 + [0] * 36)
    for bad in ({"temperature": -1}, {"top_p": 0}, {"top_p": 1.5}, {"top_k": -1}):
        with pytest.raises(ValueError) as caught:
            filtered_probabilities(logits, **bad)
        assert str(caught.value) == "temperature must be >= 0, top_k >= 0 and top_p in (0, 1]"


def test_softmax_of_large_logits():
    from tfstudio.probes.walk import softmax
    np.testing.assert_allclose(softmax(np.array([1000.0, 1000.0 - np.log(3)])), [0.75, 0.25])


def test_the_walk_check_tolerance_by_hand():
    from tfstudio.probes.walk import check
    message = ("the walk's computation of x disagrees with the model's; the block may have "
               "changed without the walk following it")
    hundred = torch.tensor([100.0])
    check(hundred + 0.01, hundred, "x")                # 0.01 <= 1e-4 * (1 + 100)
    for a, b in ((torch.tensor([100.01015]), hundred),   # just over 1e-4 * 101
                 (torch.tensor([0.01]), torch.tensor([0.0])),
                 (torch.ones(1, 3), torch.ones(3))):       # the same values, another shape
        with pytest.raises(RuntimeError) as caught:
            check(a, b, "x")
        assert str(caught.value) == message
    check(torch.tensor([0.5]), torch.tensor([0.0]), "x", tol=0.5)   # exactly at the limit


def test_the_walk_defaults_positions_and_heads(gpt, tokenizer):
    from tfstudio.probes import forward_walk
    model, _ = gpt
    inputs = probe_inputs(model, tokenizer, "abcab")
    walk = forward_walk(model, inputs)
    assert walk.position == 4 and walk.head == 0
    assert (walk.tokens, walk.ids, walk.stream_role) == (inputs.tokens, inputs.ids, "tokens")
    with torch.no_grad():
        np.testing.assert_allclose(walk.logits, model(*inputs.args)[0].numpy(), rtol=1e-6)
    assert walk.step("layers.0.attn: head 0: scores").shape == (5, 5)
    last = walk.steps[-1]
    assert last.name == "probabilities at position 4 after top-k 0 and top-p 1"
    np.testing.assert_allclose(last.value, walk.step("probabilities at position 4").value)
    assert forward_walk(model, inputs, position=-5).position == 0
    for outside in (5, -6):
        with pytest.raises(ValueError) as caught:
            forward_walk(model, inputs, position=outside)
        assert str(caught.value) == (f"position {outside} is outside the text's 5 tokens "
                                     "(0..4, or negative from the end)")
    heads = block_of(model, "layers.0.attn").heads
    forward_walk(model, inputs, head=heads - 1)
    with pytest.raises(ValueError) as caught:
        forward_walk(model, inputs, head=heads)
    assert str(caught.value) == (f"head {heads} does not exist in layers.0.attn (it has "
                                 f"{heads} heads: 0..{heads - 1})")
    with pytest.raises(KeyError) as caught:
        walk.step("nothing")
    assert caught.value.args == ("no step named 'nothing'",)


def test_the_walk_of_an_attention_outside_any_group(tokenizer):
    from tfstudio.probes import forward_walk
    model = graph_file([TOKENS, {"id": "embed", "type": "token_embedding",
                                 "params": {"d_model": 64}},
                        {"id": "attn", "type": "attention", "params": {"heads": 4}},
                        {"id": "norm", "type": "norm", "params": {}}, HEAD],
                       [["tokens", "ids", "embed", "ids"], ["embed", "y", "attn", "x"],
                        ["attn", "y", "norm", "x"], ["norm", "y", "head", "x"]])
    inputs = probe_inputs(model, tokenizer, "abc")
    names = [s.name for s in forward_walk(model, inputs, layer=0).steps]
    assert "attn: output projection" in names and "attn: head 0: scores" not in names
    assert "attn: head 0: scores" in [s.name for s in forward_walk(model, inputs).steps]


def test_the_recorder_leaves_out_the_group_copies_by_default(gpt):
    from tfstudio.probes.walk import CallRecorder
    model, inputs = gpt
    with CallRecorder(model) as recorder, torch.no_grad():
        model(*inputs.args)
    assert recorder.calls and all(len(c.key) != 2 for c in recorder.calls)


def test_the_walk_as_json(gpt, tokenizer):
    import json
    from tfstudio.probes import forward_walk
    from tfstudio.probes.walk import json_values
    model, _ = gpt
    walk = forward_walk(model, probe_inputs(model, tokenizer, "abc"))
    data = json.loads(json.dumps(walk.to_dict()))
    assert sorted(data) == ["head", "ids", "position", "steps", "stream_role", "tokens"]
    assert (data["head"], data["position"], data["stream_role"]) == (0, 2, "tokens")
    assert data["ids"] == walk.ids and data["tokens"] == walk.tokens
    first = walk.steps[0]
    assert data["steps"][0] == {"name": first.name, "formula": first.formula,
                                "shape": list(first.value.shape), "block": first.block,
                                "kind": first.kind, "values": first.value.tolist()}
    assert first.to_dict() == {**first.to_dict(values=False), "values": first.value.tolist()}
    bare = walk.to_dict(values=False)
    assert all("values" not in s for s in bare["steps"]) and len(bare["steps"]) == len(walk.steps)
    assert json_values(np.array([[1.0, -np.inf], [np.nan, 2.0]])) == [[1.0, None], [None, 2.0]]
    assert json_values(np.array([1, 2])) == [1, 2]
    mask = walk.step("layers.0.attn: head 0: mask")
    assert json_values(mask.value) == mask.value.tolist()


def test_the_walk_of_one_gpt_layer_by_hand(gpt, tokenizer):
    """Every step of embedding, positions, norm, one attention head and the feed-forward,
    recomputed here from the blocks' weights, with the names and formulas the view shows."""
    from tfstudio.probes import forward_walk
    model, _ = gpt
    inputs = probe_inputs(model, tokenizer, "abcab")
    walk = forward_walk(model, inputs, head=1)
    steps = {s.name: s for s in walk.steps}
    ids = torch.tensor(inputs.ids["tokens"])
    E = block_of(model, "embed").weight.detach()
    P = block_of(model, "pos").table.weight.detach()
    expected = [("embed: token ids", "id_t = tokenizer(text)_t", ids.numpy(), "token_embedding"),
                ("embed: embedding", "x_t = E[id_t]", E[ids].numpy(), "token_embedding"),
                ("pos: position vectors", "p_t = P[t] (learned table)", P[:5].numpy(),
                 "positional_encoding"),
                ("pos: embedding + position", "x_t + p_t", (E[ids] + P[:5]).numpy(),
                 "positional_encoding")]
    for name, formula, value, kind in expected:
        step = steps[name]
        assert (step.formula, step.kind, step.block) == (formula, kind, name.split(":")[0])
        np.testing.assert_allclose(step.value, value, rtol=1e-5, atol=1e-6)
    # the norm before the attention: layer norm by hand
    norm = block_of(model, "layers.0.norm_attn")
    x_in = steps["layers.0.norm_attn: input"].value.astype(np.float64)
    mu, var = x_in.mean(-1, keepdims=True), x_in.var(-1, keepdims=True)
    x = (x_in - mu) / np.sqrt(var + norm.eps) * norm.weight.detach().numpy() \
        + norm.bias.detach().numpy()
    out = steps["layers.0.norm_attn: output"]
    assert out.formula == "(x - mean(x)) / sqrt(var(x) + eps) * g + b"
    assert steps["layers.0.norm_attn: input"].formula == "x" and out.kind == "norm"
    np.testing.assert_allclose(out.value, x, rtol=1e-4, atol=1e-5)
    # head 1 of 4 (16 wide): its rows of the fused q, k, v projection
    attn = block_of(model, "layers.0.attn")
    W, b = attn.qkv.weight.detach().double().numpy(), attn.qkv.bias.detach().double().numpy()
    qkv = x @ W.T + b
    q, k, v = (qkv[:, part * 64 + 16: part * 64 + 32] for part in range(3))
    scores = q @ k.T / 4.0
    causal = np.tril(np.ones((5, 5), dtype=bool))
    e = np.where(causal, np.exp(scores - scores.max(-1, keepdims=True)), 0.0)
    weights = e / e.sum(-1, keepdims=True)
    label = "layers.0.attn: head 1"
    for name, formula, value in [
            ("q", "q = x W_q (this head's rows of qkv)", q),
            ("k", "k = x W_k (K/V head 1)", k),
            ("v", "v = x W_v (K/V head 1)", v),
            ("scores", "S = q k^T / sqrt(d_head)", scores),
            ("mask", "M[i, j] = query i may attend to key j (causal)", causal),
            ("softmax", "A = softmax(S, masked -inf) per row", weights),
            ("weighted values", "z = A v", weights @ v)]:
        step = steps[f"{label}: {name}"]
        assert (step.formula, step.kind, step.block) == (formula, "attention", "layers.0.attn")
        np.testing.assert_allclose(step.value, value, rtol=1e-4, atol=1e-5)
    assert steps["layers.0.attn: output projection"].formula == "y = concat(z_1..z_H) W_o"
    # the feed-forward after its norm
    ffn = block_of(model, "layers.0.ffn")
    h_in = steps["layers.0.norm_ffn: output"].value.astype(np.float64)
    up = h_in @ ffn.up.weight.detach().double().numpy().T + ffn.up.bias.detach().double().numpy()
    act = F.gelu(torch.tensor(up)).numpy()
    down = act @ ffn.down.weight.detach().double().numpy().T \
        + ffn.down.bias.detach().double().numpy()
    for name, formula, value in [("up projection", "u = x W_up + b", up),
                                 ("activation", "h = gelu(u)", act),
                                 ("down projection", "y = h W_down + b", down)]:
        step = steps[f"layers.0.ffn: {name}"]
        assert (step.formula, step.kind, step.block) == (formula, "feed_forward", "layers.0.ffn")
        np.testing.assert_allclose(step.value, value, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- the walk of every block kind
def f64(tensor) -> np.ndarray:
    return tensor.detach().double().numpy()


def value_of(steps, name: str) -> np.ndarray:
    return steps[name].value.astype(np.float64)


def walk_steps(model, tokenizer, text, **options):
    from tfstudio.probes import forward_walk
    walk = forward_walk(model, probe_inputs(model, tokenizer, text), **options)
    return walk, {s.name: s for s in walk.steps}


def assert_steps(steps, block, kind, expected, rtol=1e-4, atol=1e-5):
    """Each (name, formula, value) is a step of ``block`` of ``kind`` with those values."""
    for name, formula, value in expected:
        step = steps[name]
        assert (step.formula, step.block, step.kind) == (formula, block, kind), name
        np.testing.assert_allclose(step.value, value, rtol=rtol, atol=atol, err_msg=name)


def rms_norm(x, norm):
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + norm.eps) * f64(norm.weight)


def rotate(x, base=10000.0):
    """RoPE by hand: the pair (2i, 2i+1) at position t turned by t * base^(-2i/d)."""
    T, d = x.shape
    angle = np.arange(T)[:, None] * base ** (-np.arange(0, d, 2) / d)[None, :]
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(angle) - x[:, 1::2] * np.sin(angle)
    out[:, 1::2] = x[:, 0::2] * np.sin(angle) + x[:, 1::2] * np.cos(angle)
    return out


def softmax_rows(s, allowed=None):
    e = np.exp(s - s.max(-1, keepdims=True))
    if allowed is not None:
        e = np.where(allowed, e, 0.0)
    return e / e.sum(-1, keepdims=True)


def swiglu_steps(x, ffn, d_ff):
    """(up, gate, gated, down) of a SwiGLU feed-forward without biases, by hand."""
    h = x @ f64(ffn.up.weight).T
    gate, up = h[:, :d_ff], h[:, d_ff:]
    act = gate / (1 + np.exp(-gate))
    return up, act, act * up, (act * up) @ f64(ffn.down.weight).T


def test_the_walk_of_one_llama_layer_by_hand(tokenizer):
    """RMSNorm, grouped-query attention with RoPE (query head 3 reads K/V head 1), SwiGLU and the
    tied head of tiny-llama, recomputed from the weights, with the names the view shows."""
    model = model_of("tiny-llama", tokenizer)
    walk, steps = walk_steps(model, tokenizer, "abcab", head=3, layer=0, temperature=0.5,
                             top_k=5, top_p=0.5)
    norm = block_of(model, "layers.0.norm_attn")
    x_in = value_of(steps, "layers.0.norm_attn: input")
    np.testing.assert_allclose(x_in, steps["embed: embedding"].value, rtol=1e-6)
    x = rms_norm(x_in, norm)
    assert_steps(steps, "layers.0.norm_attn", "norm", [
        ("layers.0.norm_attn: input", "x", x_in),
        ("layers.0.norm_attn: output", "x / sqrt(mean(x^2) + eps) * g", x)])
    attn = block_of(model, "layers.0.attn")
    assert attn.qkv.bias is None and (attn.heads, attn.kv_heads, attn.head_dim) == (4, 2, 16)
    qkv = x @ f64(attn.qkv.weight).T                  # [q: 4 heads | k: 2 heads | v: 2 heads]
    q, k, v = qkv[:, 48:64], qkv[:, 64 + 16:64 + 32], qkv[:, 96 + 16:96 + 32]
    qr, kr = rotate(q), rotate(k)
    scores = qr @ kr.T / 4.0
    causal = np.tril(np.ones((5, 5), dtype=bool))
    weights = softmax_rows(scores, causal)
    rope = "pair (2i, 2i+1) at position t turned by t * base^(-2i/d_head)"
    label = "layers.0.attn: head 3"
    assert_steps(steps, "layers.0.attn", "attention", [
        (f"{label}: q", "q = x W_q (this head's rows of qkv)", q),
        (f"{label}: k", "k = x W_k (K/V head 1)", k),
        (f"{label}: v", "v = x W_v (K/V head 1)", v),
        (f"{label}: q rotated (RoPE)", rope, qr),
        (f"{label}: k rotated (RoPE)", rope, kr),
        (f"{label}: scores", "S = q k^T / sqrt(d_head)", scores),
        (f"{label}: mask", "M[i, j] = query i may attend to key j (causal)", causal),
        (f"{label}: softmax", "A = softmax(S, masked -inf) per row", weights),
        (f"{label}: weighted values", "z = A v", weights @ v)])
    assert [n for n in steps if n.startswith("layers.0.attn")][:3] == [
        f"{label}: q", f"{label}: k", f"{label}: v"]
    assert not any(n.startswith("layers.1.attn: head") for n in steps)   # only layer 0 opened
    projection = steps["layers.0.attn: output projection"]
    assert (projection.formula, projection.block, projection.kind) == (
        "y = concat(z_1..z_H) W_o", "layers.0.attn", "attention")
    # the feed-forward: no biases, so no "+ b" in its formulas
    ffn = block_of(model, "layers.0.ffn")
    h_in = value_of(steps, "layers.0.norm_ffn: output")
    up, act, gated, down = swiglu_steps(h_in, ffn, 176)
    assert_steps(steps, "layers.0.ffn", "feed_forward", [
        ("layers.0.ffn: up projection", "u = x W_up", up),
        ("layers.0.ffn: gate", "g = silu(x W_gate)", act),
        ("layers.0.ffn: gated", "h = g * u", gated),
        ("layers.0.ffn: down projection", "y = h W_down", down)])
    # the tied head, then the sampling steps at the last position
    final = value_of(steps, "final_norm: output")
    logits = final @ f64(block_of(model, "embed").weight).T
    assert_steps(steps, "head", "head", [
        ("head: logits", "l = x W_vocab^T (tied to the embedding)", logits)])
    row = logits[4]
    p = np.exp(row - row.max()) / np.exp(row - row.max()).sum()
    cooled = np.exp(2 * (row - row.max())) / np.exp(2 * (row - row.max())).sum()
    kept = np.argsort(-cooled)[:5]          # top-5, then the smallest set reaching 0.5
    q5 = cooled[kept] / cooled[kept].sum()
    keep = kept[(np.cumsum(q5) - q5) < 0.5]
    assert 1 < len(keep) < 5                # top-p cuts into the top-5 here
    expected = np.zeros_like(row)
    expected[keep] = cooled[keep] / cooled[keep].sum()
    assert_steps(steps, "", "sampling", [
        ("probabilities at position 4", "p = softmax(l)", p),
        ("probabilities at position 4 after temperature 0.5", "softmax(l / 0.5)", cooled),
        ("probabilities at position 4 after top-k 5 and top-p 0.5",
         "keep the k likeliest, then the smallest set reaching p; renormalise", expected)],
        rtol=1e-3, atol=1e-6)
    assert walk.steps[-3].name == "probabilities at position 4"


def test_the_walk_of_a_sliding_window_and_a_greedy_head(tokenizer):
    from tfstudio.probes import forward_walk
    model = model_of("tiny-mistral", tokenizer)
    walk, steps = walk_steps(model, tokenizer, "abcab", layer=1, temperature=0, position=2)
    mask = steps["layers.1.attn: head 0: mask"]
    assert mask.formula == "M[i, j] = query i may attend to key j (causal) (window 16)"
    # temperature 0: no temperature step, the final distribution is the argmax alone
    sampling = [s.name for s in walk.steps if s.kind == "sampling"]
    assert sampling == ["probabilities at position 2",
                        "probabilities at position 2 after top-k 0 and top-p 1"]
    greedy = steps["probabilities at position 2 after top-k 0 and top-p 1"].value
    assert greedy.argmax() == walk.logits[2].argmax() and greedy.sum() == greedy.max() == 1
    # an untied head says so
    untied = graph_file([TOKENS, {"id": "embed", "type": "token_embedding",
                                  "params": {"d_model": 64}},
                         {"id": "norm", "type": "norm", "params": {}}, HEAD],
                        [["tokens", "ids", "embed", "ids"], ["embed", "y", "norm", "x"],
                         ["norm", "y", "head", "x"]])
    inputs = probe_inputs(untied, tokenizer, "abc")
    untied_steps = {s.name: s for s in forward_walk(untied, inputs).steps}
    assert untied_steps["head: logits"].formula == "l = x W_vocab^T"
    ids = untied_steps["embed: token ids"]
    assert ids.value.dtype == np.int64 and ids.value.tolist() == inputs.ids["tokens"]


def moe_by_hand(x, moe):
    """Router logits, probabilities, the top-2 experts and their renormalised weights."""
    logits = x @ f64(moe.router.weight).T
    probs = softmax_rows(logits)
    chosen = np.argsort(-probs, axis=-1, kind="stable")[:, :2]
    top = np.take_along_axis(probs, chosen, -1)
    return logits, probs, chosen, top / top.sum(-1, keepdims=True)


def recorded(model, inputs):
    from tfstudio.probes.walk import CallRecorder
    with CallRecorder(model) as recorder, torch.no_grad():
        model(*inputs.args)
    return {".".join(map(str, c.key)): c for c in recorder.calls}


def test_the_walk_of_a_mixture_of_experts_by_hand(tokenizer):
    """tiny-mixtral's router, the chosen experts and their weights, and the expert the shown
    position sent its token to first, opened up with its SwiGLU steps."""
    model = model_of("tiny-mixtral", tokenizer)
    text, position = "hello world!", 4
    walk, steps = walk_steps(model, tokenizer, text, position=position)
    moe = block_of(model, "layers.0.moe")
    x = value_of(steps, "layers.0.norm_moe: output")
    logits, probs, chosen, weights = moe_by_hand(x, moe)
    # the test's text and position tell apart the first choice here from the second choice and
    # from the first choice of the other positions a slip could read
    first = chosen[position, 0]
    assert first != chosen[position, 1] and first not in (chosen[-1, 0], chosen[1, 0],
                                                          chosen[-2, 0])
    assert_steps(steps, "layers.0.moe", "moe", [
        ("layers.0.moe: router logits", "r = x W_router", logits),
        ("layers.0.moe: router probabilities", "softmax(r)", probs),
        ("layers.0.moe: chosen experts", "the top 2 experts per token", chosen),
        ("layers.0.moe: expert weights", "w = p_chosen / sum(p_chosen)", weights)])
    expert = moe.experts[first]
    up, act, gated, down = swiglu_steps(x, expert, 128)
    label = f"layers.0.moe: expert {first}"
    assert_steps(steps, "layers.0.moe", "feed_forward", [
        (f"{label}: up projection", "u = x W_up", up),
        (f"{label}: gate", "g = silu(x W_gate)", act),
        (f"{label}: gated", "h = g * u", gated),
        (f"{label}: down projection", "y = h W_down", down)])
    mixed = np.zeros_like(x)
    for t in range(len(x)):
        for slot in range(2):
            _, _, _, y = swiglu_steps(x[t:t + 1], moe.experts[chosen[t, slot]], 128)
            mixed[t] += weights[t, slot] * y[0]
    assert_steps(steps, "layers.0.moe", "moe", [
        ("layers.0.moe: mixture output", "y = sum_k w_k FFN_(e_k)(x)", mixed)])
    names = [s.name for s in walk.steps if s.block == "layers.0.moe"]
    assert names == ["layers.0.moe: router logits", "layers.0.moe: router probabilities",
                     "layers.0.moe: chosen experts", "layers.0.moe: expert weights",
                     f"{label}: up projection", f"{label}: gate", f"{label}: gated",
                     f"{label}: down projection", "layers.0.moe: mixture output"]
    assert steps["layers.0.moe: chosen experts"].value.dtype == np.int64
    # a position past this block's tokens (a longer stream elsewhere) opens its last token's
    from tfstudio.probes.walk import _BlockOpener
    call = recorded(model, probe_inputs(model, tokenizer, text))["layers.0.moe"]
    for beyond in (len(x), len(x) + 1):
        opened = _BlockOpener(0, None, beyond, (1.0, 0, 1.0)).open(call)
        assert opened[4].name == f"layers.0.moe: expert {chosen[-1, 0]}: up projection"


def test_the_walk_of_a_mixture_with_a_shared_expert(tokenizer):
    def shared(graph):
        graph.nodes["layers"].subgraph.nodes["moe"].params["shared_expert"] = True
    model = edited("tiny-mixtral", tokenizer, shared)
    _, steps = walk_steps(model, tokenizer, "abcab", layer=0)
    moe = block_of(model, "layers.0.moe")
    x = value_of(steps, "layers.0.norm_moe: output")
    _, _, chosen, weights = moe_by_hand(x, moe)
    mixed = swiglu_steps(x, moe.shared, 128)[3]
    for t in range(len(x)):
        for slot in range(2):
            mixed[t] += weights[t, slot] * swiglu_steps(x[t:t + 1], moe.experts[chosen[t, slot]],
                                                        128)[3][0]
    assert_steps(steps, "layers.0.moe", "moe", [
        ("layers.0.moe: mixture output", "y = sum_k w_k FFN_(e_k)(x) + FFN_shared(x)", mixed)])


def test_the_walk_of_cross_attention_by_hand(tokenizer):
    """tiny-t5 with a grouped-query cross-attention that has biases: query head 3 of the target
    reads K/V head 1 of the source; the scaled embedding and the sinusoids before it."""
    def grouped(graph):
        graph.nodes["decoder"].subgraph.nodes["cross"].params.update(kv_heads=2, bias=True)
    model = edited("tiny-t5", tokenizer, grouped)
    cross = block_of(model, "decoder.0.cross")
    with torch.no_grad():
        for linear in (cross.q, cross.kv):
            linear.bias.add_(0.1 * torch.randn_like(linear.bias))
    _, steps = walk_steps(model, tokenizer, "abc>abcab", head=3, layer=0)
    ids = torch.tensor(probe_inputs(model, tokenizer, "abc>abcab").ids["source"])
    embedded = f64(block_of(model, "src_embed").weight)[ids] * 8.0        # sqrt(64)
    t, k2 = np.arange(3)[:, None], np.arange(0, 64, 2)[None, :]
    table = np.zeros((3, 64))
    table[:, 0::2], table[:, 1::2] = np.sin(t / 10000 ** (k2 / 64)), np.cos(t / 10000 ** (k2 / 64))
    assert_steps(steps, "src_embed", "token_embedding", [
        ("src_embed: embedding", "x_t = E[id_t] * sqrt(d)", embedded)])
    assert_steps(steps, "src_pos", "positional_encoding", [
        ("src_pos: position vectors", "p_(t,2k) = sin(t / 10000^(2k/d)), p_(t,2k+1) = cos(...)",
         table),
        ("src_pos: embedding + position", "x_t + p_t", embedded + table)])
    x = value_of(steps, "decoder.0.norm_cross: output")
    memory = value_of(steps, "encoder_norm: output")
    q = (x @ f64(cross.q.weight).T + f64(cross.q.bias))[:, 48:64]
    kv = memory @ f64(cross.kv.weight).T + f64(cross.kv.bias)        # [k: 2 heads | v: 2 heads]
    k, v = kv[:, 16:32], kv[:, 48:64]
    scores = q @ k.T / 4.0
    weights = softmax_rows(scores)
    label = "decoder.0.cross: head 3"
    assert_steps(steps, "decoder.0.cross", "cross_attention", [
        (f"{label}: q", "q = x W_q (queries from the target)", q),
        (f"{label}: k", "k = memory W_k (keys from the source, K/V head 1)", k),
        (f"{label}: v", "v = memory W_v (values from the source)", v),
        (f"{label}: scores", "S = q k^T / sqrt(d_head)", scores),
        (f"{label}: softmax", "A = softmax(S) per row (no mask)", weights),
        (f"{label}: weighted values", "z = A v", weights @ v)])
    for block in ("decoder.0.cross", "decoder.1.cross"):
        projection = steps[f"{block}: output projection"]
        assert (projection.formula, projection.block, projection.kind) == (
            "y = concat(z_1..z_H) W_o", block, "attention")
    assert not any(n.startswith("decoder.1.cross: head") for n in steps)
    # a head the cross-attention lacks is refused naming it
    from tfstudio.probes.walk import _BlockOpener
    call = recorded(model, probe_inputs(model, tokenizer, "abc>abcab"))["decoder.0.cross"]
    with pytest.raises(ValueError) as caught:
        _BlockOpener(4, None, 0, (1.0, 0, 1.0)).open(call)
    assert str(caught.value) == ("head 4 does not exist in decoder.0.cross (it has 4 heads: "
                                 "0..3)")


def test_the_walk_of_alibi_attention_by_hand(tokenizer):
    """tiny-alibi-gpt's head 1: the bias -m_h (i - j) on allowed keys (m_1 = 2^-4 for 4 heads),
    zero where the mask removes the key anyway, and the softmax of S + B."""
    model = model_of("tiny-alibi-gpt", tokenizer)
    _, steps = walk_steps(model, tokenizer, "abcab", head=1)
    label = "layers.0.attn: head 1"
    q = value_of(steps, f"{label}: q")
    k = value_of(steps, f"{label}: k")
    i, j = np.arange(5)[:, None], np.arange(5)[None, :]
    causal = j <= i
    bias = np.where(causal, -(2.0 ** -4) * (i - j), 0.0)
    weights = softmax_rows(q @ k.T / 4.0 + bias, causal)
    assert_steps(steps, "layers.0.attn", "attention", [
        (f"{label}: ALiBi bias", "B[i, j] = -0.0625 * |i - j| (this head's slope)", bias),
        (f"{label}: softmax", "A = softmax(S + B, masked -inf) per row", weights)])


def test_the_walk_of_a_bidirectional_encoder_and_its_masked_lm_head(tokenizer):
    """tiny-bert: no causal mask (every key allowed, a symmetric ALiBi bias) and the head's
    transform LayerNorm(gelu(x W + b)) before the logits."""
    model = model_of("tiny-bert", tokenizer)
    _, steps = walk_steps(model, tokenizer, "abcab")
    mask = steps["layers.0.attn: head 0: mask"]
    assert mask.formula == "M[i, j] = query i may attend to key j"
    assert mask.value.all() and mask.value.shape == (5, 5)
    i, j = np.arange(5)[:, None], np.arange(5)[None, :]
    np.testing.assert_allclose(steps["layers.0.attn: head 0: ALiBi bias"].value,
                               -0.25 * np.abs(i - j))
    head = block_of(model, "head")
    x = value_of(steps, "layers.1.norm_ffn: output")
    dense = F.gelu(torch.tensor(x @ f64(head.dense.weight).T + f64(head.dense.bias))).numpy()
    mu, var = dense.mean(-1, keepdims=True), dense.var(-1, keepdims=True)
    transformed = (dense - mu) / np.sqrt(var + head.norm.eps) * f64(head.norm.weight) \
        + f64(head.norm.bias)
    assert_steps(steps, "head", "head", [
        ("head: transform", "LayerNorm(gelu(x W_dense + b))", transformed)])
    assert [n for n in steps if n.startswith("head:")] == ["head: transform", "head: logits"]


@pytest.mark.parametrize("cell, formula", [
    ("lstm", "h_t = o_t * tanh(c_t), c_t = f_t * c_(t-1) + i_t * g_t"),
    ("gru", "h_t = (1 - z_t) * n_t + z_t * h_(t-1)"),
    ("rnn", "h_t = tanh(x_t W_ih + h_(t-1) W_hh + b)")])
def test_the_walk_of_a_recurrent_layer(tokenizer, cell, formula):
    def with_cell(graph):
        graph.nodes["rnn"].params["cell"] = cell
    model = edited("tiny-lstm", tokenizer, with_cell)
    walk, steps = walk_steps(model, tokenizer, "abcab")
    x = value_of(steps, "embed: embedding")
    expected = [("rnn: input", "x", x)]
    if cell == "rnn":       # by hand: h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh)
        rnn = next(m for m in block_of(model, "rnn").modules() if isinstance(m, torch.nn.RNN))
        h, hidden = np.zeros(64), []
        for x_t in x:
            h = np.tanh(f64(rnn.weight_ih_l0) @ x_t + f64(rnn.bias_ih_l0)
                        + f64(rnn.weight_hh_l0) @ h + f64(rnn.bias_hh_l0))
            hidden.append(h)
        expected.append(("rnn: hidden state", formula, np.array(hidden)))
    assert_steps(steps, "rnn", "rnn", expected)
    state = steps["rnn: hidden state"]
    assert (state.formula, state.block, state.kind, state.shape) == (formula, "rnn", "rnn",
                                                                     (5, 64))
    assert [s.name for s in walk.steps if s.block == "rnn"] == ["rnn: input", "rnn: hidden state"]


def test_a_block_the_walk_cannot_recompute_is_named(tokenizer):
    """Every checked block's recomputation against an output that is off by one: refused
    naming the block (the walk never shows steps that disagree with the model)."""
    from tfstudio import nn as blocks
    from tfstudio.probes.walk import Call, _BlockOpener
    checked = (blocks.TokenEmbedding, blocks.Norm, blocks.SelfAttention, blocks.CrossAttention,
               blocks.FeedForward, blocks.MixtureOfExperts, blocks.LMHead)
    seen = set()
    for preset, text in (("tiny-mixtral", "abc"), ("tiny-t5", "ab>abc"), ("tiny-llama", "abc")):
        model = model_of(preset, tokenizer)
        for name, call in recorded(model, probe_inputs(model, tokenizer, text)).items():
            if not isinstance(call.module, checked) or type(call.module) in seen:
                continue
            seen.add(type(call.module))
            wrong = Call(call.key, call.module, call.args, call.output + 1)
            with pytest.raises(RuntimeError) as caught:
                _BlockOpener(0, None, 0, (1.0, 0, 1.0)).open(wrong)
            assert str(caught.value) == (
                f"the walk's computation of {name} disagrees with the model's; the block may "
                "have changed without the walk following it")
    assert seen == set(checked)


def test_the_walk_of_blocks_compiled_graphs_inline(tokenizer):
    """nn.Add, nn.Dropout, a position block without positions, a LayerNorm without a shift and
    a module the walk has no recipe for, each opened from a call made here."""
    from tfstudio import nn as blocks
    from tfstudio.probes.walk import Call, _BlockOpener
    opener = _BlockOpener(0, None, 0, (1.0, 0, 1.0))
    torch.manual_seed(0)
    a, b, c = (torch.randn(2, 3, 4) for _ in range(3))
    for args in ((a, b), (a, b, c)):
        add = blocks.Add()
        (step,) = opener.open(Call(("layers", 0, "add"), add, args, add(*args)))
        assert (step.name, step.formula, step.block, step.kind) == (
            "layers.0.add: residual add", "x + F(x)", "layers.0.add", "add")
        np.testing.assert_allclose(step.value, sum(t[0] for t in args).numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="computation of layers.0.add disagrees"):
        opener.open(Call(("layers", 0, "add"), blocks.Add(), (a, b), a))
    dropout = blocks.Dropout(0.5).eval()
    assert opener.open(Call(("drop",), dropout, (a,), dropout(a))) == []
    none = blocks.PositionalEncoding(4, scheme="none")
    assert opener.open(Call(("pos",), none, (a,), none(a))) == []
    norm = blocks.Norm(4, bias=False)
    with torch.no_grad():
        norm.weight.mul_(2.0)
    x = f64(a[0])
    steps = opener.open(Call(("norm",), norm, (a,), norm(a)))
    assert [(s.name, s.formula, s.block, s.kind) for s in steps] == [
        ("norm: input", "x", "norm", "norm"),
        ("norm: output", "(x - mean(x)) / sqrt(var(x) + eps) * g + b", "norm", "norm")]
    np.testing.assert_allclose(steps[1].value, 2 * (x - x.mean(-1, keepdims=True))
                               / np.sqrt(x.var(-1, keepdims=True) + 1e-5), rtol=1e-4)
    # anything else: its output (the first of a tuple), batch row 0
    linear = torch.nn.Linear(4, 2)
    y = linear(a)
    for output in (y, (y, a), [y, a]):
        (step,) = opener.open(Call(("proj", 1), linear, (a,), output))
        assert (step.name, step.formula, step.block, step.kind) == (
            "proj.1: output", "y = Linear(x)", "proj.1", "Linear")
        np.testing.assert_allclose(step.value, y[0].detach().numpy())
