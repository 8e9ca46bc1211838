"""``tfstudio export SOURCE --format hf|pytorch|onnx --out DIR``.

SOURCE is a run folder (its latest checkpoint and tokenizer), or a preset name / graph .json
(freshly initialised weights, for trying the formats out)."""
from __future__ import annotations

from pathlib import Path

from . import values
from .checks import say_what_is_used
from .errors import UsageError, check_out_apart, user_message

FORMATS = ("hf", "pytorch", "onnx")


def configure(parser) -> None:
    parser.add_argument("source", type=values.path, help="a run folder written by `tfstudio train` (or a preset "
                                       "name / graph .json: fresh weights)")
    parser.add_argument("--format", choices=FORMATS, default="hf",
                        help="hf: config.json + model.safetensors for transformers; pytorch: a "
                             "standalone model.py + weights; onnx: model.onnx (default hf)")
    parser.add_argument("--out", type=values.path, required=True, help="folder to write (created if missing)")
    parser.add_argument("--force", action="store_true",
                        help="write into --out even if it already holds files (its files are "
                             "replaced only once the export has succeeded)")


def run(args) -> int:
    from ..export.errors import ExportRefused, InteropError

    if Path(args.source).is_dir():
        check_out_apart(args.out, {"the run export reads": args.source})
    from ..train.preload import READING, import_frozen
    import_frozen(READING)  # torch comes in here
    export = _exporter(args.format)
    _print_checkpoint_notes(args.source)
    try:
        _check_fresh_model_memory(args.source)
        # written beside --out and moved in once whole (export/staging.py): a refused or
        # failed export leaves --out as it was
        report = export(args.source, args.out, overwrite=args.force)
    except ExportRefused as exc:  # one line, each problem after the last
        raise UsageError(f"this graph cannot be exported as {exc.target}: "
                         + "; ".join(map(str, exc.problems))) from None
    except (InteropError, OSError, ValueError) as exc:
        raise UsageError(user_message(exc)) from None
    print(report)
    return 0


def _check_fresh_model_memory(source: str) -> None:
    """A preset or graph file is exported with fresh weights: refuse one that cannot fit
    before building it (a run folder's load has its own check)."""
    from ..runs.folder import RunFolder
    from ..runs.preflight import check_model_memory
    if Path(source).is_dir() and RunFolder(source).exists():
        return
    from .. import load_graph
    try:
        graph = load_graph(source)
    except Exception:  # noqa: BLE001 - the exporter says what is wrong with the source
        return
    check_model_memory(graph, copies=2, what=f"exporting {source}")


def _print_checkpoint_notes(source: str) -> None:
    """Say which damaged newer checkpoint of a run folder the export passes over."""
    from ..runs.folder import RunFolder
    if Path(source).is_dir() and RunFolder(source).exists():
        say_what_is_used("tfstudio export", RunFolder(source))


def _exporter(fmt: str):
    if fmt == "hf":
        from ..export.hf_export import export_hf
        return export_hf
    if fmt == "pytorch":
        from ..export.standalone import export_pytorch
        return export_pytorch
    from ..export.onnx_export import export_onnx
    return export_onnx
