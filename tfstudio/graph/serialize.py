"""JSON files for graphs. Loading only parses data; nothing in a file is ever executed.

Every file either loads or is refused with a :class:`GraphFileError` naming the field. Besides
the schema's own checks, loading enforces the limits below, which keep every later step (the
cost model's products, the compiler's walk into groups, Python's own recursion) within range.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from .model import GROUP, Edge, Graph, GraphError, Node
from .schema import BlockSpec, ParamSpec, UnknownBlockError, get_spec

FORMAT_VERSION = 1

# A whole-number parameter (a width, a count, a length) and the copies of any block (the
# product of the repeats around it) stay at most int32's largest value, so the cost model's
# products of a few sizes stay far inside a float's range.
MAX_SIZE = 2 ** 31 - 1
# A float parameter ends up in float32 arithmetic; beyond this it would be infinite there.
MAX_FLOAT = 3.4e38
# Canvas coordinates.
MAX_POSITION = 1e9
# Groups inside groups: real models use one or two levels; the limit keeps every recursive
# walk over the graph (validation, costs, the compiler) far from Python's recursion limit.
MAX_GROUP_DEPTH = 32
# JSON arrays/objects inside each other: room for MAX_GROUP_DEPTH groups (3 levels each).
MAX_JSON_DEPTH = 128
# Python refuses to convert longer digit strings to int (sys.get_int_max_str_digits()).
_MAX_INT_DIGITS = 4300
META_TEXT_FIELDS = ("name", "description", "family")


class GraphFileError(GraphError):
    """A graph file that cannot be read; the message names the problem and the fix."""


# ------------------------------------------------------------------------------------ writing
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


def dumps(graph: Graph) -> str:
    return json.dumps(graph_to_dict(graph), indent=1)


def save_graph(graph: Graph, path: str | Path) -> None:
    """Write atomically: a crash mid-save leaves the previous file intact."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(dumps(graph), encoding="utf-8")
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk gets its space back; the old file stays
        raise


# ------------------------------------------------------------------------------------ reading
def load_graph_file(path: str | Path) -> Graph:
    path = Path(path)
    if path.exists() and not path.is_file():  # a device such as /dev/zero never ends
        raise GraphFileError(f"{path}: not a regular file (a folder or a device); a tfstudio "
                             "graph is a JSON file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise GraphFileError(f"{path}: cannot read the file ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise GraphFileError(f"{path}: not UTF-8 text; a tfstudio graph is a JSON file") from None
    return loads(text, str(path))


def loads(text: str, source: str = "graph") -> Graph:
    if _json_depth(text) > MAX_JSON_DEPTH:
        raise GraphFileError(
            f"{source}: arrays and objects are nested more than {MAX_JSON_DEPTH} levels deep; "
            f"tfstudio reads at most {MAX_JSON_DEPTH} (room for {MAX_GROUP_DEPTH} groups inside "
            "groups); ungroup some groups or fix the file"
        )
    try:
        data = json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise GraphFileError(
            f"{source}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    _refuse_lone_surrogates(text, data, source)
    return graph_from_dict(data, source)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _refuse_lone_surrogates(text: str, data: Any, source: str) -> None:
    """JSON may spell half of a UTF-16 pair (``\\ud800``) alone; such a string is not text
    and could not be printed or saved as UTF-8 later."""
    escape = _SURROGATE_ESCAPE.search(text)
    if escape is None:
        return
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise GraphFileError(
            f"{source}: a string holds half of a UTF-16 surrogate pair (a \\udXXX escape "
            "without its partner), which is not valid Unicode text; remove it from the file"
        ) from None


_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def _json_depth(text: str) -> int:
    """How deeply arrays and objects nest, counted without parsing (brackets inside strings
    do not count), so a file nested too deep for the JSON parser is refused first."""
    depth = deepest = 0
    for match in _JSON_BRACKET.finditer(_JSON_STRING.sub('""', text)):
        depth += 1 if match.group() in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


class _HugeInteger(float):
    """A JSON integer too long for ``int()``: infinite, so every number field refuses it, and
    remembering its length for the message."""

    def __new__(cls, digits: str) -> "_HugeInteger":
        number = super().__new__(cls, math.inf if not digits.startswith("-") else -math.inf)
        number.digits = len(digits.lstrip("-"))
        return number


def _parse_int(digits: str) -> int | float:
    return int(digits) if len(digits) <= _MAX_INT_DIGITS else _HugeInteger(digits)


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
    return _parse_body(data, _Place(source))


class _Place:
    """Where in the file a body is: for messages, and for the nesting and copies limits."""

    def __init__(self, source: str, groups: tuple[str, ...] = (), copies: int = 1) -> None:
        self.source = source
        self.groups = groups    # ids of the groups around this body, outermost first
        self.copies = copies    # product of their repeats

    @property
    def depth(self) -> int:
        return len(self.groups)

    def __str__(self) -> str:
        shown = list(self.groups)
        if len(shown) > 4:  # a deep path stays readable: its two outer groups and the last
            shown[2:-1] = [f"({len(shown) - 3} more groups)"]
        return self.source + "".join(f" > {g}" for g in shown)

    def inside(self, group: Node) -> "_Place":
        return _Place(self.source, self.groups + (group.id,),
                      self.copies * group.params.get("repeat", 1))


def _parse_body(data: dict, place: _Place) -> Graph:
    """One graph level: its facts, its nodes (groups recursively), the wires between them."""
    graph = Graph(meta=_parse_meta(data.get("meta"), place))
    nodes = data.get("nodes")
    if not isinstance(nodes, list):
        raise GraphFileError(f"{place}: 'nodes' must be a list")
    for i, item in enumerate(nodes):
        node = _parse_node(item, place, f"{place}: node #{i}")
        try:
            graph.add_node(node)
        except GraphError as exc:
            raise GraphFileError(f"{place}: node #{i}: {exc}") from None
    _parse_edges(data.get("edges", []), graph, place)
    return graph


def _parse_meta(meta: Any, place: _Place) -> dict[str, Any]:
    """The graph's facts: the ones tfstudio reads must have the right type; others are kept."""
    meta = meta or {}
    if not isinstance(meta, dict):
        raise GraphFileError(f"{place}: 'meta' must be an object of names to values")
    for key in META_TEXT_FIELDS:
        if key in meta and not isinstance(meta[key], str):
            raise GraphFileError(f"{place}: meta '{key}' must be text; got {_show(meta[key])}")
    if meta.get("context_length") is not None:
        value = meta["context_length"]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
            raise GraphFileError(
                f"{place}: meta 'context_length' must be a whole number from 1 to "
                f"{MAX_SIZE:,}; got {_show(value)}; set it to the training length, e.g. 256"
            )
    for key, value in meta.items():
        if _holds_huge_integer(value):
            raise GraphFileError(f"{place}: meta '{key}' holds a number of more than "
                                 f"{_MAX_INT_DIGITS:,} digits, which tfstudio cannot keep "
                                 "(it would be saved as Infinity); shorten it")
    return dict(meta)


def _holds_huge_integer(value: Any) -> bool:
    """Whether a kept value (a meta entry, nested any way) holds an over-long integer."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _HugeInteger):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _parse_node(item: Any, place: _Place, loc: str) -> Node:
    if not isinstance(item, dict) or "id" not in item or "type" not in item:
        raise GraphFileError(f"{loc}: each node needs an 'id' and a 'type'")
    for key in ("id", "type", "title"):
        if key in item and not isinstance(item[key], str):
            raise GraphFileError(f"{loc}: '{key}' must be text; got {_show(item[key])}")
    loc = f"{loc} ('{item['id']}')"
    try:
        spec = get_spec(item["type"])
    except UnknownBlockError as exc:
        raise GraphFileError(f"{loc}: {exc}") from None
    node = Node(item["id"], spec.type, _parse_params(item.get("params"), spec, loc),
                _parse_pos(item.get("pos"), loc), item.get("title", ""))
    if "subgraph" in item:
        node.subgraph = _parse_subgraph(item["subgraph"], node, place, loc)
    return node


def _parse_params(params: Any, spec: BlockSpec, loc: str) -> dict[str, Any]:
    params = params or {}
    if not isinstance(params, dict):
        raise GraphFileError(f"{loc}: 'params' must be an object")
    clean = {}
    for key, value in params.items():
        try:
            param = spec.param(key)
        except KeyError:
            raise GraphFileError(f"{loc}: block '{spec.type}' has no parameter '{key}'; "
                                 "remove it from the file") from None
        try:
            clean[key] = param.coerce(_in_range(param, value))
        except ValueError as exc:
            raise GraphFileError(f"{loc}: {exc}") from None
    return clean


def _in_range(param: ParamSpec, value: Any) -> Any:
    """Refuse a number too large for its parameter before the schema converts it (converting
    a huge int to float raises OverflowError)."""
    if param.kind not in ("int", "float") or isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value  # the schema names the wrong type
    elif isinstance(value, (int, float)):
        number = value
    else:
        return value
    limit = MAX_SIZE if param.kind == "int" else MAX_FLOAT
    if abs(number) > limit:  # NaN passes on: the schema refuses it
        shown = f"{limit:,}" if param.kind == "int" else f"{limit:g}"
        raise ValueError(f"'{param.name}' is {_show(value)}, more than the {shown} tfstudio "
                         "accepts; use a smaller value")
    return value


def _parse_pos(pos: Any, loc: str) -> tuple[float, float]:
    if pos is None:
        return (0.0, 0.0)
    if (isinstance(pos, list) and len(pos) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                    and abs(v) <= MAX_POSITION for v in pos)):  # NaN fails the comparison
        return (float(pos[0]), float(pos[1]))
    raise GraphFileError(f"{loc}: 'pos' must be [x, y] with numbers within ±{MAX_POSITION:,.0f}; "
                         f"got {_show(pos)}")


def _parse_subgraph(data: Any, group: Node, place: _Place, loc: str) -> Graph:
    if group.type != GROUP:
        raise GraphFileError(f"{loc}: only a group has a 'subgraph'; a {group.type} block "
                             "cannot hold one")
    if not isinstance(data, dict):
        raise GraphFileError(f"{loc}: 'subgraph' must be an object with 'nodes' and 'edges'")
    inner = place.inside(group)
    if inner.depth > MAX_GROUP_DEPTH:
        raise GraphFileError(f"{loc}: groups are nested more than {MAX_GROUP_DEPTH} deep; "
                             f"tfstudio accepts at most {MAX_GROUP_DEPTH} levels of groups "
                             "inside groups; ungroup some of them")
    if inner.copies > MAX_SIZE:
        raise GraphFileError(f"{loc}: the repeats of the nested groups multiply to "
                             f"{inner.copies:,} copies, more than the {MAX_SIZE:,} tfstudio "
                             "accepts; lower a 'repeat'")
    return _parse_body(data, inner)


def _parse_edges(edges: Any, graph: Graph, place: _Place) -> None:
    if not isinstance(edges, list):
        raise GraphFileError(f"{place}: 'edges' must be a list")
    for i, e in enumerate(edges):
        if not (isinstance(e, list) and len(e) == 4 and all(isinstance(x, str) for x in e)):
            raise GraphFileError(f"{place}: edge #{i} must be [src, src_port, dst, dst_port]")
        try:
            graph.add_edge(Edge(*e))
        except GraphError as exc:
            raise GraphFileError(f"{place}: edge #{i}: {exc}") from None


def _show(value: Any) -> str:
    """A value for a message: short, and a huge number by its size rather than its digits."""
    if isinstance(value, _HugeInteger):
        return f"a {value.digits:,}-digit number"
    if isinstance(value, float) and math.isinf(value):
        return "a number too large to represent"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** 15:
        return f"a {len(str(abs(value)))}-digit number"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
