"""``tfstudio export SOURCE --format hf|pytorch|onnx --out DIR``.

SOURCE is a run folder (its latest checkpoint and tokenizer), or a preset name / graph .json
(freshly initialised weights, for trying the formats out)."""
from __future__ import annotations

from .errors import UsageError


FORMATS = ("hf", "pytorch", "onnx")


def configure(parser) -> None:
    parser.add_argument("source", help="a run folder written by `tfstudio train` (or a preset "
                                       "name / graph .json: fresh weights)")
    parser.add_argument("--format", choices=FORMATS, default="hf",
                        help="hf: config.json + model.safetensors for transformers; pytorch: a "
                             "standalone model.py + weights; onnx: model.onnx (default hf)")
    parser.add_argument("--out", required=True, help="folder to write (created if missing)")
    parser.add_argument("--force", action="store_true",
                        help="write into --out even if it already holds files")


def run(args) -> int:
    from ..export.errors import InteropError

    export = _exporter(args.format)
    _print_checkpoint_notes(args.source)
    try:
        report = export(args.source, args.out, overwrite=args.force)
    except (InteropError, OSError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    print(report)
    return 0


def _print_checkpoint_notes(source: str) -> None:
    """Say which damaged newer checkpoint of a run folder the export passes over."""
    from pathlib import Path

    from ..runs.folder import RunFolder
    if Path(source).is_dir() and RunFolder(source).exists():
        folder = RunFolder(source)
        folder.checkpoint()
        for note in folder.notes:
            print(f"tfstudio export: {note}", file=sys.stderr)


def _exporter(fmt: str):
    if fmt == "hf":
        from ..export.hf_export import export_hf
        return export_hf
    if fmt == "pytorch":
        from ..export.standalone import export_pytorch
        return export_pytorch
    from ..export.onnx_export import export_onnx
    return export_onnx
