"""The ``tfstudio`` command. Every sub-command lives in its own module of this package, imported
only when used, so ``tfstudio presets`` never pays for torch and ``tfstudio`` (the GUI) never
waits for it."""
from __future__ import annotations

import argparse
import importlib
import sys

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
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported (its options are configured)."""
    parser = argparse.ArgumentParser(
        prog="tfstudio", description="Build, train and look inside transformers.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module_name)
        if name == command:
            importlib.import_module(module_name).configure(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `tfstudio` alone opens the GUI; so do `tfstudio FILE.json` and `tfstudio --preset llama`
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help")):
        argv = ["gui", *argv]
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    module = importlib.import_module(args._module)
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `tfstudio inspect llama | head`: the reader left, nothing to say
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
