"""What a view's Export button offers and writes, without Qt: the formats with their dialog
filters, which picture a file name asks for (or why none), and the button's tooltip (the
extension a bare name gets: file_lines.with_suffix, as the File menu's). picture_export.py
saves the pictures."""
from __future__ import annotations

from pathlib import Path

FILTERS = {"png": "PNG image (*.png)", "svg": "SVG drawing (*.svg)",
           "csv": "CSV table (*.csv)"}


def picture_format(path: str | Path) -> str:
    """"png" (the view's pixels) or "svg" (its drawing), by the file's extension in any case;
    ValueError for any other."""
    suffix = Path(path).suffix.lower()
    if suffix in (".png", ".svg"):
        return suffix[1:]
    raise ValueError(f"cannot export as {suffix or 'a file without an extension'}; "
                     "use .png or .svg")


def export_tip(name: str, csv: bool) -> str:
    return f"Save the {name} as a picture" + (" or its data as CSV" if csv else "")
