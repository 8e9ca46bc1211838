"""The ``tfstudio`` command. Every sub-command lives in its own module of this package, imported
only when used, so ``tfstudio presets`` never pays for torch and ``tfstudio`` (the GUI) never
waits for it."""
from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from pathlib import Path

from .errors import (USAGE_EXIT, Parser, UsageError, os_error_line, report_internal,
                     report_usage)
from .help import HelpFormatter

# name -> (module with configure(parser) and run(args) -> int, one-line help)
COMMANDS = {
    "gui": ("tfstudio.cli.gui", "open the editor (the default with no command)"),
    "presets": ("tfstudio.cli.presets", "list the built-in architectures"),
    "inspect": ("tfstudio.cli.inspect", "validate a graph and print shapes and costs"),
    "train": ("tfstudio.cli.train", "train a graph on a corpus"),
    "generate": ("tfstudio.cli.generate", "sample text from a trained run"),
    "explain": ("tfstudio.cli.explain", "step through a model's forward pass on a text"),
    "export": ("tfstudio.cli.export", "export a run (Hugging Face, PyTorch, ONNX)"),
    "import-hf": ("tfstudio.cli.import_hf", "turn a local Hugging Face checkpoint into a run"),
    "compare": ("tfstudio.cli.compare", "train variants of a graph side by side and report"),
    "eval": ("tfstudio.cli.eval", "loss per position bucket of a run (length extrapolation)"),
    "lesson": ("tfstudio.cli.lesson", "run a built-in lesson, 'all' of them, or list the course"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported (its options are configured)."""
    parser = Parser(prog="tfstudio", description="Build, train and look inside transformers.",
                    epilog="`tfstudio COMMAND -h` explains a command's options.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text,
                           formatter_class=HelpFormatter)
        p.set_defaults(_module=module_name)
        if name == command:
            importlib.import_module(module_name).configure(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        argv = _with_command(argv)
    except UsageError as exc:
        return report_usage("", str(exc))
    parser = build_parser(argv[0])
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # -h, or a bad argument (already reported in one line)
        return exc.code if isinstance(exc.code, int) else USAGE_EXIT
    if args.command is None:
        parser.print_help()
        return 2
    module = importlib.import_module(args._module)
    try:
        return int(module.run(args) or 0)
    except UsageError as exc:
        return report_usage(args.command, str(exc))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `tfstudio inspect llama | head`: the reader left, nothing to say
        sys.stderr.close()
        return 0
    except Exception as exc:  # a bug, unless the machine refused a path: said in one line
        line = refused_write(exc) or (os_error_line(exc) if isinstance(exc, OSError) else None)
        if line:
            return report_usage(args.command, line)
        return report_internal(args.command)


def refused_write(exc: BaseException) -> str | None:
    """The one line for a write the disk refused that no command caught itself (a report, a
    lesson's page), naming the file's folder; None for any other error."""
    from ..runs.disk import disk_refusal, disk_line
    if disk_refusal(exc) is None:
        return None
    name = getattr(exc, "filename", None)
    where = Path(name).parent if name else "the output folder"
    when = f"while writing {Path(name).name}" if name else "while writing"
    return disk_line(exc, where, when, "the files written before it are whole", "run it again")


def _with_command(argv: list[str]) -> list[str]:
    """``argv`` starting with a sub-command: `tfstudio`, `tfstudio FILE.json` and `tfstudio
    --preset llama` open the editor; a word that is neither a command nor a file is refused."""
    if not argv:
        return ["gui"]
    first = argv[0]
    if first in COMMANDS or first in ("-h", "--help"):
        return argv
    if first.startswith("-") or Path(first).is_file():
        return ["gui", *argv]
    if first.endswith(".json"):
        raise UsageError(f"no graph file '{first}'; check the path")
    from ..presets import preset_names
    if first in preset_names():
        raise UsageError(f"'{first}' is a preset, not a command; open it with `tfstudio --preset "
                         f"{first}`, or e.g. `tfstudio train {first} --out runs/{first}`")
    close = difflib.get_close_matches(first, COMMANDS, n=1)
    hint = f"did you mean `tfstudio {close[0]}`?" if close else \
        f"the commands are {', '.join(COMMANDS)} (see `tfstudio -h`)"
    raise UsageError(f"'{first}' is not a command or a file; {hint}")


if __name__ == "__main__":
    sys.exit(main())
