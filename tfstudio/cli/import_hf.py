"""``tfstudio import-hf DIR [--out RUN_DIR] [--tokenizer byte]``: a local Hugging Face checkpoint
(GPT-2, LLaMA, Mistral, Mixtral, Qwen2, BERT) becomes a tfstudio run folder. Never uses the
network. The commands it suggests afterwards are only those that will work on that run."""
from __future__ import annotations

import os
import shlex
from pathlib import Path

from . import values
from .errors import UsageError, check_out_apart, user_message


def configure(parser) -> None:
    parser.add_argument("folder", type=values.path, help="a local Hugging Face model folder (config.json + "
                                       "model.safetensors)")
    parser.add_argument("--out", type=values.path, default=None,
                        help="run folder to write (default: ./<folder name>-tfstudio)")
    parser.add_argument("--force", action="store_true",
                        help="write into --out even if it already holds files")
    parser.add_argument("--tokenizer", default=None, metavar="SPEC",
                        help="give the run this tokenizer instead of the folder's own: 'byte' "
                             "(or 'tiktoken:NAME'); each id keeps the checkpoint's embedding "
                             "and head row for the same token, so it needs a vocabulary with a "
                             "token per byte, such as GPT-2's (default: the folder's own "
                             "tokenizer, when tfstudio can represent it)")
    parser.add_argument("--no-memory-check", action="store_true",
                        help="import even when the memory pre-flight predicts the weights will "
                             "not fit (the refusal names both numbers)")


def run(args) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # belt and braces: nothing here downloads
    from ..export.errors import InteropError
    from ..train.preload import READING, import_frozen
    import_frozen(READING)  # torch comes in here
    from ..export.hf_import import import_hf

    out = args.out or f"{Path(args.folder).resolve().name}-tfstudio"
    check_out_apart(out, {"the model import-hf reads": args.folder})
    try:
        report = import_hf(args.folder, out, overwrite=args.force, tokenizer=args.tokenizer,
                           memory_check=not args.no_memory_check)
    except (InteropError, OSError, ValueError) as exc:
        raise UsageError(user_message(exc)) from None
    print(report)
    for line in next_steps(args.folder, out):
        print(line)
    return 0


def next_steps(folder: str, out: str) -> list[str]:
    """What to do with the new run, each command one that works on it as printed."""
    from ..runs.folder import RunFolder

    run = RunFolder(out)
    q = shlex.quote
    export = f"export it: tfstudio export {q(out)} --format hf --out {q(out + '-hf')}"
    if run.tokenizer_path.exists():
        steps = [f"fine-tune it: {tune_command(out)}", export]
        if run.graph().meta.get("family") != "encoder":
            steps.insert(0, f"generate from it: tfstudio generate {q(out)} --prompt 'Once'")
        return steps
    why_not = byte_refusal(Path(folder), run)
    if why_not:
        return [f"no tokenizer came with it, so text commands cannot run on it, and "
                f"--tokenizer byte cannot help: {why_not}", export]
    byte_out = out + "-byte"  # a new folder: the old import's checkpoint has other shapes
    force = " --force" if Path(byte_out).is_dir() and any(Path(byte_out).iterdir()) else ""
    return [f"no tokenizer came with it; to give it tfstudio's byte tokenizer (keeping the "
            f"checkpoint's row for each byte): tfstudio import-hf {q(folder)} --out "
            f"{q(byte_out)} --tokenizer byte{force}",
            f"then fine-tune it: {tune_command(byte_out)}", export]


def tune_command(run: str) -> str:
    q = shlex.quote
    return (f"tfstudio train {q(str(Path(run) / 'graph.json'))} --init-from {q(run)} "
            f"--corpus sample --out {q(run + '-tuned')}")


def byte_refusal(folder: Path, run) -> str:
    """Why ``--tokenizer byte`` would be refused for this checkpoint ('' when it would work)."""
    from ..data import build_tokenizer
    from ..export.errors import InteropError
    from ..export.hf_import import graph_vocab, read_config
    from ..export.hf_tokenizer import read_vocabulary, rows_for

    try:
        cfg = read_config(folder)
        rows = graph_vocab(run.graph())
        rows_for(build_tokenizer("byte"), read_vocabulary(folder, cfg.model_type, rows), rows,
                 cfg, "byte")
    except InteropError as exc:
        return str(exc)
    return ""
