"""``tfstudio export SOURCE --format hf|pytorch|onnx --out DIR``.

SOURCE is a run folder (its latest checkpoint and tokenizer), or a preset name / graph .json
(freshly initialised weights, for trying the formats out)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from . import values
from .checks import say_what_is_used
from .errors import UsageError, user_message

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

    export = _exporter(args.format)
    _print_checkpoint_notes(args.source)
    try:
        _check_fresh_model_memory(args.source)
        report = (_export_then_replace(export, args.source, Path(args.out)) if args.force
                  else export(args.source, args.out, overwrite=False))
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


def _export_then_replace(export, source: str, out: Path):
    """--force into a folder that holds files: export into a fresh folder next to it first, so
    a refused or failed export leaves it as it was; then move the new files in (files of other
    names in it are kept)."""
    if not (out.is_dir() and any(out.iterdir())):
        return export(source, out, overwrite=True)
    staging = out.parent / f".{out.name}.export-{os.getpid()}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        report = export(source, staging, overwrite=False)
        for item in sorted(staging.iterdir()):
            target = out / item.name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            os.replace(item, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    report.out_dir = out
    return report


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
