"""JSON files for graphs. Loading only parses data; nothing in a file is ever executed."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .model import GROUP, Edge, Graph, GraphError, Node
from .schema import UnknownBlockError, get_spec

FORMAT_VERSION = 1


class GraphFileError(GraphError):
    """A graph file that cannot be read; the message names the problem and the fix."""


def graph_to_dict(graph: Graph) -> dict[str, Any]:
    return {"format_version": FORMAT_VERSION, **_body(graph)}


def _body(graph: Graph) -> dict[str, Any]:
    nodes = []
    for n in graph.nodes.values():
        item: dict[str, Any] = {"id": n.id, "type": n.type, "params": dict(n.params),
                                "pos": [round(float(n.pos[0]), 2), round(float(n.pos[1]), 2)]}
        if n.title:
            item["title"] = n.title
        if n.subgraph is not None:
            item["subgraph"] = _body(n.subgraph)
        nodes.append(item)
    out: dict[str, Any] = {}
    if graph.meta:
        out["meta"] = dict(graph.meta)
    out["nodes"] = nodes
    out["edges"] = [[e.src, e.src_port, e.dst, e.dst_port] for e in graph.edges]
    return out


def graph_from_dict(data: Any, source: str = "graph") -> Graph:
    if not isinstance(data, dict):
        raise GraphFileError(f"{source}: expected a JSON object at the top level")
    version = data.get("format_version")
    if version is None:
        raise GraphFileError(f"{source}: missing 'format_version'; is this a tfstudio graph file?")
    if type(version) is not int or version != FORMAT_VERSION:
        raise GraphFileError(
            f"{source}: format_version {version!r} is not supported (this tfstudio reads "
            f"version {FORMAT_VERSION}); open it with a matching tfstudio release"
        )
    return _parse_body(data, source, "")


def _parse_body(data: dict, source: str, where: str) -> Graph:
    meta = data.get("meta") or {}
    if not isinstance(meta, dict):
        raise GraphFileError(f"{source}{where}: 'meta' must be an object of names to values")
    graph = Graph(meta=dict(meta))
    nodes = data.get("nodes")
    if not isinstance(nodes, list):
        raise GraphFileError(f"{source}{where}: 'nodes' must be a list")
    for i, item in enumerate(nodes):
        loc = f"{source}{where}: node #{i}"
        if not isinstance(item, dict) or "id" not in item or "type" not in item:
            raise GraphFileError(f"{loc}: each node needs an 'id' and a 'type'")
        try:
            spec = get_spec(str(item["type"]))
        except UnknownBlockError as exc:
            raise GraphFileError(f"{loc} ('{item['id']}'): {exc}") from None
        params = item.get("params") or {}
        if not isinstance(params, dict):
            raise GraphFileError(f"{loc}: 'params' must be an object")
        clean = {}
        for key, value in params.items():
            try:
                clean[key] = spec.param(key).coerce(value)
            except KeyError:
                raise GraphFileError(
                    f"{loc} ('{item['id']}'): block '{spec.type}' has no parameter '{key}'; "
                    "remove it from the file"
                ) from None
            except ValueError as exc:
                raise GraphFileError(f"{loc} ('{item['id']}'): {exc}") from None
        pos = item.get("pos") or [0, 0]
        try:
            pos_t = (float(pos[0]), float(pos[1]))
        except (TypeError, ValueError, IndexError):
            raise GraphFileError(f"{loc}: 'pos' must be [x, y]") from None
        sub = None
        if "subgraph" in item:
            if spec.type != GROUP:
                raise GraphFileError(f"{loc} ('{item['id']}'): only a group has a 'subgraph'; "
                                     f"a {spec.type} block cannot hold one")
            if not isinstance(item["subgraph"], dict):
                raise GraphFileError(f"{loc} ('{item['id']}'): 'subgraph' must be an object "
                                     "with 'nodes' and 'edges'")
            sub = _parse_body(item["subgraph"], source, f"{where} > {item['id']}")
        try:
            graph.add_node(Node(str(item["id"]), spec.type, clean, pos_t,
                                str(item.get("title", "")), sub))
        except GraphError as exc:
            raise GraphFileError(f"{loc}: {exc}") from None
    edges = data.get("edges", [])
    if not isinstance(edges, list):
        raise GraphFileError(f"{source}{where}: 'edges' must be a list")
    for i, e in enumerate(edges):
        if not (isinstance(e, list) and len(e) == 4 and all(isinstance(x, str) for x in e)):
            raise GraphFileError(
                f"{source}{where}: edge #{i} must be [src, src_port, dst, dst_port]"
            )
        try:
            graph.add_edge(Edge(*e))
        except GraphError as exc:
            raise GraphFileError(f"{source}{where}: edge #{i}: {exc}") from None
    return graph


def dumps(graph: Graph) -> str:
    return json.dumps(graph_to_dict(graph), indent=1)


def loads(text: str, source: str = "graph") -> Graph:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GraphFileError(
            f"{source}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    return graph_from_dict(data, source)


def save_graph(graph: Graph, path: str | Path) -> None:
    """Write atomically: a crash mid-save leaves the previous file intact."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dumps(graph), encoding="utf-8")
    tmp.replace(path)


def load_graph_file(path: str | Path) -> Graph:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise GraphFileError(f"{path}: cannot read the file ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise GraphFileError(f"{path}: not UTF-8 text; a tfstudio graph is a JSON file") from None
    return loads(text, str(path))
