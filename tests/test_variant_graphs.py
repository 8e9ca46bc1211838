"""The graphs ``--vary`` builds: each variant's graph carries every one of its settings (not only
the last key's), and ``apply_setting`` does what each switch and parameter path says from bases
of every attention kind. Expectations are read off the wires and parameters by hand here, not
through the switches' own helpers."""
import pytest

from tfstudio.experiments.variants import VariantError, apply_setting, expand
from tfstudio.graph import Graph
from tfstudio.presets import load_preset


def mqa_gpt() -> Graph:
    graph = load_preset("tiny-gpt")
    graph.nodes["layers"].subgraph.nodes["attn"].params["kv_heads"] = 1
    return graph


BASES = {"mha": lambda: load_preset("tiny-gpt"),       # 4 heads, 4 K/V heads
         "gqa": lambda: load_preset("tiny-llama"),     # 4 heads, 2 K/V heads
         "mqa": mqa_gpt}                               # 4 heads, 1 K/V head


def attention(graph: Graph) -> list[dict]:
    return [dict(node.params) for _, node in graph.walk() if node.type == "attention"]


def heads_kv(graph: Graph) -> set[tuple[int, int]]:
    return {(a["heads"], a["kv_heads"]) for a in attention(graph)}


def layer(graph: Graph) -> Graph:
    return graph.nodes["layers"].subgraph


def norm_place(graph: Graph) -> str:
    """Where the attention sublayer's norms sit, read off the wires: a norm feeding attention
    is a pre-norm, a norm between attention and its Add a sandwich's out-norm, and a norm fed
    by the Add (with no norm before attention) a post-norm."""
    inner = layer(graph)
    attn = inner.node("attn")
    feeders = {inner.node(e.src).type for e in inner.in_edges("attn")}
    readers = {inner.node(e.dst).type for e in inner.out_edges(attn.id)}
    is_norm = lambda types: any("norm" in t for t in types)  # noqa: E731
    if is_norm(feeders):
        return "sandwich" if is_norm(readers) else "pre"
    adds = [inner.node(e.dst) for e in inner.out_edges(attn.id) if inner.node(e.dst).type == "add"]
    assert adds, "attention should feed its residual Add"
    after_add = {inner.node(e.dst).type for e in inner.out_edges(adds[0].id)}
    return "post" if is_norm(after_add) else "none"


def types(graph: Graph) -> list[str]:
    return [node.type for _, node in graph.walk()]


# ---------------------------------------------------------------- multi-key grids

def test_two_keys_give_every_variant_both_settings():
    base = load_preset("tiny-gpt")
    variants = expand(base, [("attention", ["mha", "mqa"]), ("norm", ["pre", "post"])])
    got = {v.name: (heads_kv(v.graph), norm_place(v.graph)) for v in variants}
    assert got == {"attention=mha, norm=pre": ({(4, 4)}, "pre"),
                   "attention=mha, norm=post": ({(4, 4)}, "post"),
                   "attention=mqa, norm=pre": ({(4, 1)}, "pre"),
                   "attention=mqa, norm=post": ({(4, 1)}, "post")}
    assert heads_kv(base) == {(4, 4)} and norm_place(base) == "pre"  # the base is untouched


def test_three_keys_over_a_gqa_base_keep_each_setting():
    variants = expand(load_preset("tiny-llama"), [("positions", ["learned", "alibi"]),
                                                  ("ffn", ["dense", "moe"]),
                                                  ("attention", ["gqa", "mha"])])
    assert len(variants) == 8
    for v in variants:
        s = dict(v.settings)
        attn = attention(v.graph)
        assert {a["position"] for a in attn} == ({"alibi"} if s["positions"] == "alibi"
                                                 else {"none"})
        assert ("positional_encoding" in types(v.graph)) == (s["positions"] == "learned")
        assert ("moe" in types(v.graph)) == (s["ffn"] == "moe")
        assert ("feed_forward" in types(v.graph)) == (s["ffn"] == "dense")
        assert heads_kv(v.graph) == ({(4, 2)} if s["attention"] == "gqa" else {(4, 4)})


def test_a_parameter_path_and_a_switch_combine():
    variants = expand(load_preset("tiny-gpt"), [("layers.attn.heads", ["2", "8"]),
                                                ("attention", ["mha", "gqa"])])
    got = {v.name: heads_kv(v.graph) for v in variants}
    assert got == {"layers.attn.heads=2, attention=mha": {(2, 2)},
                   "layers.attn.heads=2, attention=gqa": {(2, 1)},
                   "layers.attn.heads=8, attention=mha": {(8, 8)},
                   "layers.attn.heads=8, attention=gqa": {(8, 4)}}


def test_repeat_and_norm_combine():
    variants = expand(load_preset("tiny-gpt"), [("layers.repeat", ["1", "3"]),
                                                ("norm", ["sandwich", "post"])])
    got = {v.name: (v.graph.nodes["layers"].params["repeat"], norm_place(v.graph))
           for v in variants}
    assert got == {"layers.repeat=1, norm=sandwich": (1, "sandwich"),
                   "layers.repeat=1, norm=post": (1, "post"),
                   "layers.repeat=3, norm=sandwich": (3, "sandwich"),
                   "layers.repeat=3, norm=post": (3, "post")}


# ---------------------------------------------------------------- every switch, every base

KV_OF = {"mha": 4, "gqa": 2, "mqa": 1}  # K/V heads of a 4-head block of each kind


@pytest.mark.parametrize("base_kind", sorted(BASES))
@pytest.mark.parametrize("kind", ["mha", "gqa", "mqa"])
def test_attention_switch_from_every_kind(base_kind, kind):
    assert heads_kv(apply_setting(BASES[base_kind](), "attention", kind)) == {(4, KV_OF[kind])}


@pytest.mark.parametrize("base_kind", sorted(BASES))
@pytest.mark.parametrize("place", ["pre", "post", "sandwich"])
def test_norm_switch_from_every_kind_keeps_the_attention(base_kind, place):
    graph = apply_setting(BASES[base_kind](), "norm", place)
    assert norm_place(graph) == place
    assert heads_kv(graph) == {(4, KV_OF[base_kind])}


@pytest.mark.parametrize("base_kind", sorted(BASES))
@pytest.mark.parametrize("scheme", ["sinusoidal", "learned", "rope", "alibi", "none"])
def test_positions_switch_from_every_kind(base_kind, scheme):
    graph = apply_setting(BASES[base_kind](), "positions", scheme)
    tables = [n.params["scheme"] for _, n in graph.walk() if n.type == "positional_encoding"]
    in_attention = {a["position"] for a in attention(graph)}
    if scheme in ("sinusoidal", "learned"):
        assert tables == [scheme] and in_attention == {"none"}
        feeder = [graph.node(e.src).type for e in graph.in_edges("pos")]
        assert feeder == ["token_embedding"]
    else:
        assert tables == [] and in_attention == {scheme}  # rope, alibi or none
    assert heads_kv(graph) == {(4, KV_OF[base_kind])}


@pytest.mark.parametrize("base_kind", sorted(BASES))
def test_ffn_switch_from_every_kind(base_kind):
    moe = apply_setting(BASES[base_kind](), "ffn", "moe")
    assert "moe" in types(moe) and "feed_forward" not in types(moe)
    dense = apply_setting(moe, "ffn", "dense")
    assert "feed_forward" in types(dense) and "moe" not in types(dense)
    assert heads_kv(moe) == heads_kv(dense) == {(4, KV_OF[base_kind])}


@pytest.mark.parametrize("base_kind", sorted(BASES))
def test_activation_switch_reaches_every_ffn(base_kind):
    for name in ("relu", "swiglu"):
        graph = apply_setting(apply_setting(BASES[base_kind](), "ffn", "moe"), "activation", name)
        acts = [n.params["activation"] for _, n in graph.walk() if n.type in ("moe",
                                                                              "feed_forward")]
        assert acts and set(acts) == {name}


# ---------------------------------------------------------------- heads keep the attention kind

@pytest.mark.parametrize("base_kind, heads, expected", [
    ("mha", "2", (2, 2)), ("mha", "8", (8, 8)),
    ("gqa", "8", (8, 4)), ("gqa", "6", (6, 3)),  # groups of 2 stay 2
    ("mqa", "2", (2, 1)), ("mqa", "8", (8, 1)),
])
def test_heads_on_each_kind_keep_its_grouping(base_kind, heads, expected):
    graph = apply_setting(BASES[base_kind](), "layers.attn.heads", heads)
    assert heads_kv(graph) == {expected}


def test_heads_that_would_turn_a_gqa_base_into_mqa_are_refused():
    with pytest.raises(VariantError, match=r"2 heads would leave one K/V head \(MQA\)"):
        apply_setting(BASES["gqa"](), "layers.attn.heads", "2")   # groups of 2


def test_heads_on_a_gqa_base_with_groups_of_four_keep_groups_of_four():
    base = load_preset("tiny-gpt")
    base.nodes["layers"].subgraph.nodes["attn"].params.update(heads=8, kv_heads=2)
    assert heads_kv(apply_setting(base, "layers.attn.heads", "16")) == {(16, 4)}
    # groups of four at 4 heads would be one K/V head: MQA, another kind, so it is refused
    with pytest.raises(VariantError, match=r"would leave one K/V head \(MQA\)"):
        apply_setting(base, "layers.attn.heads", "4")
    with pytest.raises(VariantError, match="multiple of 4"):
        apply_setting(base, "layers.attn.heads", "6")


def test_heads_follow_the_editors_rule_so_a_remembered_gqa_comes_back():
    """A layer the editor made MQA (heads 5 cannot be grouped) remembers its GQA; varying its
    heads to 4 gets GQA 4/2 back, as the inspector's head change does (edit_rules.heads_edit),
    not MQA 4/1, and the memory is spent as it is in the editor."""
    from tfstudio.graph import Document
    from tfstudio.graph.edit_rules import heads_edit, remembered_group
    doc = Document(load_preset("tiny-llama"))
    doc.execute(heads_edit(doc.graph(("layers",)), ("layers",), "attn", 5).edit)
    assert heads_kv(doc.root) == {(5, 1)}                     # MQA, GQA remembered
    varied = apply_setting(doc.root, "layers.attn.heads", "4")
    doc.execute(heads_edit(doc.graph(("layers",)), ("layers",), "attn", 4).edit)
    assert heads_kv(varied) == heads_kv(doc.root) == {(4, 2)}
    layer = varied.nodes["layers"].subgraph
    assert remembered_group(layer, "attn") is None


def test_a_parameter_path_sets_only_its_parameter():
    base = load_preset("tiny-llama")
    graph = apply_setting(base, "layers.ffn.d_ff", "96")
    changed = [(path, n.id, k) for (path, n), (_, m) in zip(base.walk(), graph.walk())
               for k in n.params if n.params[k] != m.params[k]]
    assert changed == [(("layers",), "ffn", "d_ff")]
    assert graph.nodes["layers"].subgraph.nodes["ffn"].params["d_ff"] == 96


@pytest.mark.parametrize("base_kind", sorted(BASES))
def test_heads_and_kv_heads_stay_whole_numbers(base_kind):
    """A graph file holds integers: 8 // 2 = 4, not 4.0 (which the compiler would refuse)."""
    graph = apply_setting(BASES[base_kind](), "layers.attn.heads", "8")
    for attn in attention(graph):
        assert type(attn["heads"]) is int and type(attn["kv_heads"]) is int


@pytest.mark.parametrize("base_kind", sorted(BASES))
def test_activation_switch_reaches_dense_ffns(base_kind):
    graph = apply_setting(BASES[base_kind](), "activation", "relu")
    acts = [n.params["activation"] for _, n in graph.walk() if n.type == "feed_forward"]
    assert acts and set(acts) == {"relu"}
