"""Fuzzing graph files: mutated preset documents either load or are refused with GraphFileError.

Every document that loads must then survive validation, the cost model, ``tfstudio inspect``
(text and JSON, exit code 0 or 1) and, when it is valid and small, ``compile_graph``. Each
document gets a time limit; going past it counts as a hang.

    python bench/fuzz_graphs.py [--n 10000] [--seed 0] [--no-write]

prints the counts by outcome and writes them into the "Fuzzing graph files" section of
docs/BENCHMARKS.md. ``tests/graph/test_fuzz.py`` runs the same documents (a few hundred per
run) through the same :func:`outcome`. The documents come from a hypothesis strategy,
:func:`mutated_documents`: one to three changes to the tree of a preset (a value replaced by a
hostile one, an entry deleted, a parameter set, a node retyped, a wire moved, groups nested or
repeated, a node duplicated) and, for one in five, a change to the text itself (truncated, a
huge number, deep brackets, a stray character).
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import tfstudio  # noqa: F401  (registers the blocks)
from tfstudio.cli import main as tfstudio_main
from tfstudio.compiler import CompileError, compile_graph
from tfstudio.graph import (GraphFileError, all_specs, estimate_cost, has_errors, load_graph_file,
                            validate)

PRESET_DIR = Path(__file__).resolve().parent.parent / "resources" / "presets"
PRESET_DOCS = [json.loads(p.read_text()) for p in sorted(PRESET_DIR.glob("*.json"))]
BLOCK_TYPES = sorted(spec.type for spec in all_specs())
PARAMS = {spec.type: list(spec.params) for spec in all_specs()}

LOADED = "loaded (and survived every later step)"
COMPILE_REFUSED = "loaded; compile_graph refused it with CompileError"
REFUSED = "refused with GraphFileError"
HANG = "hang"
STRAY = "stray exception"  # outcome() returns f"{STRAY}: {type} in {stage}"
CLEAN = (LOADED, COMPILE_REFUSED, REFUSED)

# compile_graph only models this small: every size and the parameter count (buffers such as
# position tables are sized by max_len, so the sizes matter as well as the count)
COMPILE_MAX_PARAMS = 2_000_000
COMPILE_MAX_SIZE = 4096

HOSTILE = [0, -1, 1, 2, 3, 7, 64, 2 ** 31 - 1, 2 ** 31, 2 ** 63, 10 ** 300, -10 ** 300, 1e308,
           -1e308, float("inf"), float("-inf"), float("nan"), 0.5, -0.0, 1e-300, "", "64",
           "1e999", "nan", "x:hidden", "y:logits, z:memory", "a:b:c", ",,,", True, False, None,
           [], {}, [0], [1, 2, 3], {"x": 1}]
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
                    st.sampled_from(HOSTILE))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6)


def param_values(param) -> st.SearchStrategy:
    """Mostly plausible values of the parameter's kind (so many mutated graphs stay valid and
    reach the compiler), sometimes anything at all."""
    plausible = {
        "int": st.one_of(st.integers(0, 8), st.integers(0, 1024)),
        "float": st.one_of(st.floats(0, 1), st.floats(-10, 1e6)),
        "bool": st.booleans(),
        "choice": st.sampled_from(param.choices or ("",)),
        "str": st.sampled_from(["x:hidden", "x:hidden, memory:memory", "y:hidden", "y:logits"]),
    }[param.kind]
    return st.one_of(plausible, plausible, plausible, st.sampled_from(HOSTILE), values)


# ----------------------------------------------------------------------------- the tree
def _locations(doc: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) pair in the document, found without recursion."""
    found, stack = [], [doc]
    while stack:
        item = stack.pop()
        keys = list(item) if isinstance(item, dict) else range(len(item))
        for key in keys:
            found.append((item, key))
            if isinstance(item[key], (dict, list)):
                stack.append(item[key])
    return found


def _nodes(doc: dict) -> list[dict]:
    """Every node dict at every depth (as far as the document is still shaped like a graph)."""
    found, bodies = [], [doc]
    while bodies:
        body = bodies.pop()
        nodes = body.get("nodes") if isinstance(body, dict) else None
        for node in nodes if isinstance(nodes, list) else []:
            if isinstance(node, dict):
                found.append(node)
                bodies.append(node.get("subgraph"))
    return found


def _bodies(doc: dict) -> list[dict]:
    """The top level and every subgraph that still has a list of nodes."""
    candidates = [doc] + [n.get("subgraph") for n in _nodes(doc)]
    return [b for b in candidates if isinstance(b, dict) and isinstance(b.get("nodes"), list)]


def replace_value(draw, doc):
    container, key = draw(st.sampled_from(_locations(doc)))
    container[key] = draw(values)


def delete_entry(draw, doc):
    container, key = draw(st.sampled_from(_locations(doc)))
    del container[key]


def add_key(draw, doc):
    dicts = [doc] + [c[k] for c, k in _locations(doc) if isinstance(c[k], dict)]
    draw(st.sampled_from(dicts))[draw(st.sampled_from(
        ["pos", "params", "title", "subgraph", "meta", "edges", "nodes", "id", "type",
         "context_length", "name", "repeat", "extra"]))] = draw(values)


def set_param(draw, doc):
    nodes = [n for n in _nodes(doc) if isinstance(n.get("type"), str) and PARAMS.get(n["type"])]
    if nodes:
        node = draw(st.sampled_from(nodes))
        if not isinstance(node.get("params"), dict):
            node["params"] = {}
        param = draw(st.sampled_from(PARAMS[node["type"]]))
        node["params"][param.name] = draw(param_values(param))


def retype_node(draw, doc):
    nodes = _nodes(doc)
    if nodes:
        node = draw(st.sampled_from(nodes))
        node["type"] = draw(st.sampled_from(BLOCK_TYPES))
        if draw(st.booleans()):
            node.pop("params", None)  # else the old type's parameters are (rightly) refused


def rewire(draw, doc):
    bodies = [b for b in _bodies(doc) if isinstance(b.get("edges"), list) and b["edges"]
              and all(isinstance(e, list) for e in b["edges"])]
    if bodies:
        body = draw(st.sampled_from(bodies))
        edge = draw(st.sampled_from(body["edges"]))
        if edge:
            ids = [n.get("id") for n in body["nodes"] if isinstance(n, dict)]
            words = ids + ["x", "y", "ids", "in1", "in2", "memory", "logits", "nowhere"]
            edge[draw(st.integers(0, len(edge) - 1))] = draw(st.sampled_from(words))


def nest_groups(draw, doc):
    """Wrap one node of a body in 1-40 single-copy groups (each passing its stream through)."""
    bodies = [b for b in _bodies(doc) if any(isinstance(n, dict) and n.get("type") == "group"
                                             for n in b["nodes"])]
    if not bodies:
        return
    body = draw(st.sampled_from(bodies))
    index = draw(st.sampled_from([i for i, n in enumerate(body["nodes"])
                                  if isinstance(n, dict) and n.get("type") == "group"]))
    node = body["nodes"][index]
    for _ in range(draw(st.integers(1, 40))):
        inner = dict(node, id="inner")
        node = {"id": node.get("id", "g"), "type": "group", "params": {"repeat": 1},
                "subgraph": {"nodes": [
                    {"id": "inputs", "type": "group_input", "params": {"ports": "x:hidden"}},
                    inner,
                    {"id": "outputs", "type": "group_output", "params": {"ports": "y:hidden"}}],
                    "edges": [["inputs", "x", "inner", "x"], ["inner", "y", "outputs", "y"]]}}
    body["nodes"][index] = node


def set_repeat(draw, doc):
    groups = [n for n in _nodes(doc) if n.get("type") == "group"]
    if groups:
        node = draw(st.sampled_from(groups))
        node["params"] = {"repeat": draw(st.one_of(st.integers(-2, 64), st.integers(),
                                                   st.sampled_from(HOSTILE)))}


def duplicate_node(draw, doc):
    bodies = [b for b in _bodies(doc) if b["nodes"]]
    if not bodies:
        return
    body = draw(st.sampled_from(bodies))
    copied = copy.deepcopy(draw(st.sampled_from(body["nodes"])))
    if isinstance(copied, dict) and draw(st.booleans()):
        copied["id"] = draw(st.sampled_from(["copy", "copy2", "9bad", "", "a b"]))
    body["nodes"].append(copied)


# graph-shaped changes weigh more than blind ones, so more documents load and reach the
# validator, the cost model and the compiler
TREE_MUTATIONS: list[Callable] = [replace_value, delete_entry, add_key, set_param, set_param,
                                  set_param, set_param, retype_node, rewire, nest_groups,
                                  set_repeat, duplicate_node]


# ----------------------------------------------------------------------------- the text
def truncate(draw, text):
    return text[:draw(st.integers(0, len(text) - 1))]


def _number_spans(text):
    import re
    return [m.span() for m in re.finditer(r"(?<![\w\"])-?\d+(\.\d+)?([eE][+-]?\d+)?", text)]


def _replace_a_number(draw, text, replacement):
    spans = _number_spans(text)
    if not spans:
        return text + replacement
    start, end = draw(st.sampled_from(spans))
    return text[:start] + replacement + text[end:]


def huge_number(draw, text):
    digits = draw(st.sampled_from([310, 4300, 4301, 5000, 50_000]))
    number = draw(st.sampled_from(["9" * digits, "-" + "9" * digits, "1e999", "-1e999",
                                   "1" + "0" * digits + ".5", "NaN", "Infinity"]))
    return _replace_a_number(draw, text, number)


def deep_brackets(draw, text):
    depth = draw(st.sampled_from([40, 100, 129, 400, 1000, 100_000]))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a": ', "}")]))
    return _replace_a_number(draw, text, opener * depth + "1" + closer * depth)


def stray_character(draw, text):
    at = draw(st.integers(0, len(text) - 1))
    return text[:at] + draw(st.sampled_from(['"', "{", "]", ",", "\\", "\x00", "\ud800", "é",
                                             "-", "e"])) + text[at + 1:]


TEXT_MUTATIONS: list[Callable] = [truncate, huge_number, deep_brackets, stray_character]


@st.composite
def mutated_documents(draw) -> str:
    """The JSON text of a preset after one to three tree mutations (and maybe a text one)."""
    doc = copy.deepcopy(draw(st.sampled_from(PRESET_DOCS)))
    for _ in range(draw(st.integers(1, 3))):
        if isinstance(doc, dict) and _locations(doc):
            draw(st.sampled_from(TREE_MUTATIONS))(draw, doc)
    text = json.dumps(doc) if _json_safe(doc) else "[]"
    if draw(st.integers(0, 4)) == 0:
        text = draw(st.sampled_from(TEXT_MUTATIONS))(draw, text)
    return text


def _json_safe(doc) -> bool:
    try:
        json.dumps(doc)
    except (ValueError, RecursionError):  # a huge int or too deep for json.dumps itself
        return False
    return True


# ----------------------------------------------------------------------------- the check
class _Hang(BaseException):
    """Raised by the alarm; a BaseException so no `except Exception` in the code swallows it."""


def _alarm(signum, frame):
    raise _Hang()


def outcome(text: str, time_limit: float = 20.0) -> str:
    """What happens to one document: one of CLEAN, HANG, or "stray exception: TYPE in STAGE"."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, time_limit)
    try:
        return _outcome(text)
    except _Hang:
        return HANG
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _outcome(text: str) -> str:
    stage = "loading"
    path = _WORKDIR / "fuzz.json"
    # the bytes on disk are what loading and `inspect` both read (a lone surrogate in the
    # text makes them invalid UTF-8, which must be refused too)
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        try:
            graph = load_graph_file(path)
        except GraphFileError:
            return REFUSED
        stage = "validate"
        errors = has_errors(validate(graph))
        stage = "estimate_cost"
        report = estimate_cost(graph)
        for mode in ([], ["--json"]):
            stage = "inspect " + (" ".join(mode) or "text")
            code = _inspect(path, mode)
            if code != (1 if errors else 0):
                return f"{STRAY}: exit code {code} in {stage}"
        if not errors and _small(graph, report):
            stage = "compile_graph"
            try:
                compile_graph(graph)
            except CompileError:
                return COMPILE_REFUSED
    except Exception as exc:  # noqa: BLE001 - finding these is the point
        return f"{STRAY}: {type(exc).__name__} in {stage}"
    return LOADED


_WORKDIR = Path(tempfile.mkdtemp(prefix="tfstudio-fuzz-"))


def _inspect(path: Path, mode: list[str]) -> int:
    """Run the command with its output going to UTF-8 streams, as on a terminal (a StringIO
    would accept text that a terminal cannot print)."""
    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8") for _ in range(2))
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = tfstudio_main(["inspect", str(path), *mode])
        out.flush()
        err.flush()
    return code


def _small(graph, report) -> bool:
    sizes = [v for _, node in graph.walk() for v in node.params.values()
             if isinstance(v, int) and not isinstance(v, bool)]
    return report.total_params <= COMPILE_MAX_PARAMS and max(sizes, default=0) <= COMPILE_MAX_SIZE


# ----------------------------------------------------------------------------- the run
def fuzz(n: int, random_seed: int, on_document: Callable[[str, str], None]) -> None:
    """Draw ``n`` documents (no shrinking, no example database) and report each outcome."""
    @seed(random_seed)
    @settings(max_examples=n, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(mutated_documents())
    def run_one(text):
        on_document(text, outcome(text))

    run_one()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="documents to try (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    parser.add_argument("--no-write", action="store_true", help="do not update BENCHMARKS.md")
    args = parser.parse_args(argv)
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    started = time.perf_counter()

    def record(text: str, result: str) -> None:
        counts[result] += 1
        examples.setdefault(result, text[:300])
        if sum(counts.values()) % 1000 == 0:
            print(f"{sum(counts.values())} documents, {time.perf_counter() - started:.0f} s",
                  file=sys.stderr)

    fuzz(args.n, args.seed, record)
    seconds = time.perf_counter() - started
    for result, count in counts.most_common():
        print(f"{count:>7}  {result}")
    for result in counts:
        if result not in (LOADED, REFUSED):
            example = examples[result].encode("utf-8", "backslashreplace").decode()
            print(f"\nexample of '{result}':\n{example}")
    print(f"{sum(counts.values())} documents in {seconds:.0f} s")
    if not args.no_write:
        from report import replace_section  # bench/ is on sys.path when run as a script
        print(replace_section("## Fuzzing graph files", _section(counts, args, seconds)))
    return 0 if set(counts) <= set(CLEAN) else 1


def _section(counts: Counter, args, seconds: float) -> str:
    total = sum(counts.values())
    rows = [(r, counts.get(r, 0)) for r in (LOADED, COMPILE_REFUSED, REFUSED)]
    strays = [(r, c) for r, c in counts.most_common() if r.startswith(STRAY)]
    rows += strays or [(f"{STRAY} (any other error)", 0)]
    rows.append((HANG, counts.get(HANG, 0)))
    table = "\n".join(f"| {result} | {count:,} |" for result, count in rows)
    return f"""`python bench/fuzz_graphs.py --n {args.n} --seed {args.seed}`: {total:,} mutated
preset documents (hypothesis strategy `mutated_documents`: one to three changes to a preset's tree, and
for one in five a change to its text) in {seconds:.0f} s on a shared 2-core machine. A document
that loads must also pass through validation, the cost model, `tfstudio inspect` (text and
`--json`, exit 0 or 1, output to UTF-8 streams) and, when valid and small (at most
{COMPILE_MAX_PARAMS:,} parameters and sizes up to {COMPILE_MAX_SIZE:,}), `compile_graph`; each
document has 20 s before it counts as a hang. Target: 0 stray exceptions and 0 hangs.
`tests/graph/test_fuzz.py` runs 200 documents of the same strategy in every test run.

| outcome | documents |
|---|---:|
{table}

The compiler's refusals are its own one-line `CompileError`s for graphs that validation passes
but no model can be built from (token inputs with two of one role, or roles that make no model:
a `source` without a `target`); validation could report them earlier."""


if __name__ == "__main__":
    sys.exit(main())
