"""``tfstudio inspect GRAPH``: diagnostics, shapes, parameters and costs of a graph, without
building the model. Exits 0 for a valid graph, 1 when the graph has errors and 2 when the file
(or an option) is refused, with one line saying why."""
from __future__ import annotations

import json
import sys

from . import values


def configure(parser) -> None:
    parser.add_argument("graph", metavar="GRAPH", type=values.path, help="a preset name or a path to a .json graph")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    parser.add_argument("--context-length", type=values.positive_int, default=None, metavar="N",
                        help="cost FLOPs and check position tables at this length "
                             "(default: the graph's context_length)")
    parser.add_argument("--batch", type=values.positive_int, default=8, metavar="N",
                        help="batch size for the training-memory estimate (default 8)")
    parser.add_argument("--seq-len", type=values.positive_int, default=None, metavar="N",
                        help="sequence length for the training-memory estimate "
                             "(default: the context length)")
    parser.add_argument("--dtype", default="float32",
                        help="dtype of weights, gradients and activations while training "
                             "(default float32)")
    parser.add_argument("--kv-dtype", default="bfloat16",
                        help="dtype of the KV cache at inference (default bfloat16)")


def run(args) -> int:
    from ..graph import GraphFileError
    from ..graph.cost import estimate_cost, dtype_bytes
    from ..graph.validate import has_errors, validate
    from ..presets import load_preset_or_file
    from ..runs.preflight import training_need

    try:
        graph = load_preset_or_file(args.graph)
    except GraphFileError as exc:
        print(f"tfstudio inspect: {exc}", file=sys.stderr)
        return 2
    try:
        for name in (args.dtype, args.kv_dtype):
            dtype_bytes(name)
    except ValueError as exc:
        print(f"tfstudio inspect: {exc}", file=sys.stderr)
        return 2
    diagnostics = validate(graph, context_length=args.context_length)
    report = estimate_cost(graph, context_length=args.context_length, dtype=args.kv_dtype)
    seq_len = args.seq_len or report.context_length
    # the pre-flight's own estimate (one function for both): weights, gradients and AdamW
    # state in fp32 as the trainer keeps them, activations in --dtype (autocast)
    precision = "bf16" if dtype_bytes(args.dtype) == 2 else "fp32"
    memory = training_need(graph, batch=args.batch, seq_len=seq_len, precision=precision)
    rows = list(_rows(graph, report))
    if args.json:
        print(json.dumps(_as_json(graph, diagnostics, rows, report, memory, args, seq_len),
                         indent=1))
    else:
        print(_as_text(graph, diagnostics, rows, report, memory, args, seq_len))
    return 1 if has_errors(diagnostics) else 0


def _rows(graph, report, path=(), depth=0):
    """One row per node, depth first: groups followed by their indented inside."""
    for node in graph:
        key = (path, node.id)
        yield {
            "path": list(path), "id": node.id, "type": node.type, "depth": depth,
            "repeat": int(node.typed_params().repeat) if node.is_group else None,
            "outputs": {port: list(shape)
                        for port, shape in report.shapes.output_shapes(node.id, path).items()},
            "params": report.node_params.get(key, 0),
            "flops_per_token": report.node_flops.get(key, 0.0),
        }
        if node.subgraph is not None:
            yield from _rows(node.subgraph, report, path + (node.id,), depth + 1)


def _as_json(graph, diagnostics, rows, report, memory, args, seq_len) -> dict:
    return {
        "name": graph.meta.get("name", args.graph),
        "valid": not any(d.severity == "error" for d in diagnostics),
        "diagnostics": [{"severity": d.severity, "code": d.code, "node_id": d.node_id,
                         "path": list(d.path), "message": d.message, "hint": d.hint}
                        for d in diagnostics],
        "nodes": rows,
        "total_params": report.total_params,
        "non_embedding_params": report.non_embedding_params,
        "context_length": report.context_length,
        "flops_per_token": report.flops_per_token,
        "kv_cache_bytes_per_token": report.kv_cache_bytes_per_token,
        "kv_dtype": args.kv_dtype,
        "training_memory": {"batch": args.batch, "seq_len": seq_len, "dtype": args.dtype,
                            "weights": memory.weights, "gradients": memory.gradients,
                            "optimizer": memory.optimizer, "activations": memory.activations,
                            "total": memory.total},
    }


def _as_text(graph, diagnostics, rows, report, memory, args, seq_len) -> str:
    lines = [graph.meta.get("name", args.graph)]
    if graph.meta.get("description"):
        lines.append(f"  {graph.meta['description']}")
    lines.append("")
    if diagnostics:
        lines.append(f"Diagnostics ({len(diagnostics)}):")
        for d in sorted(diagnostics, key=lambda d: d.severity != "error"):
            lines.append(f"  {d.severity.upper()} [{d.code}] {d.where}: {d.message}")
            lines.append(f"      fix: {d.hint}")
    else:
        lines.append("Diagnostics: none, the graph is valid.")
    lines.append("")
    width = max(len("  " * r["depth"] + r["id"]) for r in rows) + 2 if rows else 10
    lines.append(f"{'block'.ljust(width)}{'type'.ljust(22)}{'output shape'.ljust(22)}"
                 f"{'params':>16}")
    for r in rows:
        kind = r["type"] + (f" x {r['repeat']}" if r["repeat"] else "")
        shapes = [f"[{', '.join(map(str, s))}]" for s in r["outputs"].values()]
        lines.append(f"{('  ' * r['depth'] + r['id']).ljust(width)}{kind.ljust(22)}"
                     f"{' '.join(shapes).ljust(22)}{r['params']:>16,}")
    lines.append("(a block inside a group is counted once; its group's row counts every copy)")
    lines += [
        "",
        f"Parameters          {report.total_params:,} "
        f"({report.non_embedding_params:,} outside embeddings)",
        f"FLOPs per token     {_si(report.flops_per_token)}FLOP forward at context "
        f"{report.context_length} (about {_si(3 * report.flops_per_token)}FLOP to train)",
        f"KV cache per token  {_bytes(report.kv_cache_bytes_per_token)} in {args.kv_dtype} "
        f"({_bytes(report.kv_cache_bytes_per_token * report.context_length)} for "
        f"{report.context_length} tokens)",
        f"Training memory     {_bytes(memory.total)} for batch {args.batch} x {seq_len} tokens "
        f"in {args.dtype} with AdamW (the pre-flight's estimate: fp32 weights, activations "
        f"with the logits' gradients and the allocator's slack):",
        f"  weights {_bytes(memory.weights)}, gradients {_bytes(memory.gradients)}, "
        f"optimizer {_bytes(memory.optimizer)}, activations {_bytes(memory.activations)}",
    ]
    return "\n".join(lines)


def _si(value: float) -> str:
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:.3g} {prefix}"
    return f"{value:.3g} "


def _bytes(value: float) -> str:
    for factor, unit in ((2 ** 40, "TiB"), (2 ** 30, "GiB"), (2 ** 20, "MiB"), (2 ** 10, "KiB")):
        if value >= factor:
            return f"{value / factor:.3g} {unit}"
    return f"{int(value)} B"
