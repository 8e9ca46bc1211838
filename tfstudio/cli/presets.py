"""``tfstudio presets``: the built-in architectures, one per line."""
from __future__ import annotations


def configure(parser) -> None:
    parser.add_argument("--long", action="store_true", help="show each preset's description")


def run(args) -> int:
    from ..presets import load_preset, preset_names

    for name in preset_names():
        if args.long:
            meta = load_preset(name).meta
            print(f"{name}\n    {meta.get('description', '')}")
        else:
            print(name)
    return 0
