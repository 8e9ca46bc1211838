"""``tfstudio import-hf DIR [--out RUN_DIR]``: a local Hugging Face checkpoint (GPT-2, LLaMA,
Mistral, Mixtral, Qwen2, BERT) becomes a tfstudio run folder. Never uses the network."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import UsageError


def configure(parser) -> None:
    parser.add_argument("folder", help="a local Hugging Face model folder (config.json + "
                                       "model.safetensors)")
    parser.add_argument("--out", default=None,
                        help="run folder to write (default: ./<folder name>-tfstudio)")
    parser.add_argument("--force", action="store_true",
                        help="write into --out even if it already holds files")


def run(args) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # belt and braces: nothing here downloads
    from ..export.errors import InteropError
    from ..export.hf_import import import_hf

    out = args.out or f"{Path(args.folder).resolve().name}-tfstudio"
    try:
        report = import_hf(args.folder, out, overwrite=args.force)
    except (InteropError, OSError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    print(report)
    print(f"open it: tfstudio generate {out} --prompt '...'  |  tfstudio export {out} ...")
    return 0
