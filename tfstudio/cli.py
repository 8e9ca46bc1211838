"""The ``tfstudio`` command. Each sub-command lives in its own module, imported only when used,
so ``tfstudio presets`` never pays for torch and ``tfstudio`` (the GUI) never waits for it."""
from __future__ import annotations

import argparse
import importlib
import sys

# name -> (module with configure(parser) and run(args) -> int, one-line help)
COMMANDS = {
    "gui": ("tfstudio.gui.launch", "open the editor (the default with no command)"),
    "presets": ("tfstudio.commands.presets", "list the built-in architectures"),
    "inspect": ("tfstudio.commands.inspect", "validate a graph and print shapes and costs"),
    "train": ("tfstudio.train.cli", "train a graph on a corpus"),
    "generate": ("tfstudio.train.generate_cli", "sample text from a trained run"),
    "export": ("tfstudio.export.cli", "export a run (Hugging Face, PyTorch, ONNX)"),
    "import-hf": ("tfstudio.export.import_cli", "turn a local Hugging Face checkpoint into a run"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tfstudio", description="Build, train and look inside transformers.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module_name)
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not module_name.startswith(exc.name):
                raise
            sub._name_parser_map.pop(name, None)  # this build lacks that part
            sub._choices_actions = [a for a in sub._choices_actions if a.dest != name]
            continue
        module.configure(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `tfstudio` alone opens the GUI; `tfstudio FILE.json` opens that graph in it
    if not argv or (argv[0] not in COMMANDS and not argv[0].startswith("-")):
        argv = ["gui", *argv]
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    module = importlib.import_module(args._module)
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
