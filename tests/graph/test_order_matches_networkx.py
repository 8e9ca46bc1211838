"""The graph's own order, cycle and reachability (stdlib graphlib, so the editor paints before
networkx loads) agree with networkx, the second implementation, on every preset level and on
random wirings."""
import random

import networkx as nx
import pytest

import tfstudio
from tfstudio.graph.model import Edge, Graph, GraphError, Node
from tfstudio.presets import preset_names


def _nx(graph: Graph) -> nx.MultiDiGraph:
    g = nx.MultiDiGraph()
    g.add_nodes_from(graph.nodes)
    g.add_edges_from((e.src, e.dst) for e in graph.edges)
    return g


def _agree(graph: Graph) -> None:
    reference = _nx(graph)
    rank = {n: i for i, n in enumerate(graph.nodes)}
    assert graph.topo_order() == list(
        nx.lexicographical_topological_sort(reference, key=rank.__getitem__))
    for n in graph.nodes:
        assert graph.upstream(n) == nx.ancestors(reference, n)
        assert graph.downstream(n) == nx.descendants(reference, n)
    assert graph.find_cycle() is None


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_level_orders_like_networkx(name):
    root = tfstudio.load_graph(name)
    _agree(root)
    for _, node in root.walk():
        if node.subgraph is not None:
            _agree(node.subgraph)


def _random_graph(rng: random.Random, n: int, wires: int, acyclic: bool) -> Graph:
    graph = Graph()
    ids = [f"n{i}" for i in rng.sample(range(100), n)]   # insertion order is not name order
    for nid in ids:
        graph.nodes[nid] = Node(nid, "add")
    for _ in range(wires):
        a, b = rng.sample(range(n), 2)
        if acyclic and a > b:
            a, b = b, a
        graph.edges.append(Edge(ids[a], "y", ids[b], rng.choice(["a", "b"])))
    return graph


@pytest.mark.parametrize("seed", range(40))
def test_random_dags_order_like_networkx(seed):
    rng = random.Random(seed)
    _agree(_random_graph(rng, rng.randint(2, 12), rng.randint(0, 20), acyclic=True))


@pytest.mark.parametrize("seed", range(20))
def test_a_cycle_is_found_and_refused_by_name(seed):
    rng = random.Random(seed)
    graph = _random_graph(rng, 6, 8, acyclic=True)
    ids = list(graph.nodes)
    graph.edges.append(Edge(ids[-1], "y", ids[0], "a"))   # may close a cycle
    reference = _nx(graph)
    if nx.is_directed_acyclic_graph(reference):
        _agree(graph)
        return
    cycle = graph.find_cycle()
    assert cycle and len(set(cycle)) == len(cycle)
    for a, b in zip(cycle, cycle[1:] + cycle[:1]):
        assert reference.has_edge(a, b)       # each node wired into the next, round to the first
    with pytest.raises(GraphError, match="cycle"):
        graph.topo_order()


def test_a_block_wired_into_itself_is_a_cycle_of_one():
    graph = Graph()
    graph.nodes["a"] = Node("a", "add")
    graph.edges.append(Edge("a", "y", "a", "b"))
    assert graph.find_cycle() == ["a"]
