"""What kind of model a graph is: its family, token inputs, head and tied embedding."""
from __future__ import annotations

from dataclasses import dataclass

from ..graph import block_types as bt
from ..graph.model import Graph, Node, is_valid_id
from .errors import CompileError, where

HEAD_TYPES = bt.HEAD_TYPES
ROLE_ARGS = {"tokens": "ids", "source": "src_ids", "target": "tgt_ids"}


@dataclass(frozen=True)
class ModelPlan:
    family: str                   # decoder | encoder | encoder-decoder
    input_roles: tuple[str, ...]  # ("tokens",) or ("source", "target")
    head: Node
    vocab_size: int
    tied_embedding: str | None    # id of the token_embedding the head shares its weight with

    @property
    def stream_role(self) -> str:
        """The input decoded incrementally (its positions advance the cache)."""
        return "target" if self.family == "encoder-decoder" else "tokens"


def plan_model(graph: Graph) -> ModelPlan:
    _check_ids(graph, ())
    roles = _token_roles(graph)
    head = _the_head(graph)
    if set(roles) == {"source", "target"}:
        family = "encoder-decoder"
    else:
        family = "encoder" if head.type == bt.MLM_HEAD else "decoder"
    order = ("source", "target") if family == "encoder-decoder" else ("tokens",)
    tied = _stream_embedding(graph, head) if bool(head.typed_params().tie) else None
    return ModelPlan(family, order, head, int(head.typed_params().vocab_size), tied)


def _check_ids(graph: Graph, path: tuple[str, ...]) -> None:
    """Node ids reach the generated code as names, so they must be plain identifiers."""
    for node in graph:
        if not is_valid_id(node.id):
            raise CompileError(f"{where(node.id, path)}: the id is not a plain identifier; "
                               "rename it with letters, digits and '_'")
        if node.subgraph is not None:
            _check_ids(node.subgraph, path + (node.id,))
            for inner in node.subgraph:
                if inner.type == bt.TOKEN_INPUT or inner.type in HEAD_TYPES:
                    raise CompileError(f"{where(inner.id, path + (node.id,))}: token inputs "
                                       "and output heads belong at the top level, not inside "
                                       "a group; move it out")


def _token_roles(graph: Graph) -> dict[str, str]:
    roles: dict[str, str] = {}
    for node in graph.nodes_of_type(bt.TOKEN_INPUT):
        role = str(node.typed_params().role)
        if role in roles:
            raise CompileError(f"{where(node.id)} and node '{roles[role]}' both have the role "
                               f"'{role}'; a model takes one input per role")
        roles[role] = node.id
    if not roles:
        raise CompileError("the graph has no Token input; add one and wire it to a token "
                           "embedding")
    if set(roles) not in ({"tokens"}, {"source", "target"}):
        raise CompileError(
            f"token inputs with roles {', '.join(sorted(roles))} do not make a model: use one "
            "input with role 'tokens' (decoder or encoder), or one 'source' and one 'target' "
            "input (encoder-decoder)")
    return roles


def _the_head(graph: Graph) -> Node:
    heads = [n for n in graph if n.type in HEAD_TYPES]
    if not heads:
        raise CompileError("the graph has no output head; add an LM head (or a masked-LM or "
                           "seq2seq head) at the end of the stream")
    if len(heads) > 1:
        raise CompileError(f"the graph has {len(heads)} output heads "
                           f"({', '.join(h.id for h in heads)}); keep exactly one")
    return heads[0]


def _stream_embedding(graph: Graph, head: Node) -> str:
    """The token embedding whose stream reaches the head, following first inputs first (so an
    encoder-decoder's head finds the target embedding, not the source one via the memory)."""
    stack, seen = [head.id], set()
    while stack:
        nid = stack.pop()
        if nid in seen:
            continue
        seen.add(nid)
        if graph.nodes[nid].type == bt.TOKEN_EMBEDDING:
            return nid
        sources = [e.src for p in graph.input_ports(nid)
                   if (e := graph.edge_into(nid, p.name)) is not None]
        stack.extend(reversed(sources))
    raise CompileError(f"{where(head.id)}: the head is tied to the token embedding, but no "
                       "token embedding feeds it; untie the head (tie = false) or wire one in")
