"""What a view's Export button offers and writes, without Qt (gui/training/export_formats.py).
The pictures saved: test_plots.py (every entry of the menu) and test_training.py."""
from __future__ import annotations

import pytest

from tfstudio.gui.file_lines import with_suffix   # the File menu's rule, which Export shares
from tfstudio.gui.training.export_formats import FILTERS, export_tip, picture_format


def test_a_picture_is_a_png_or_an_svg_by_its_extension_in_any_case():
    assert picture_format("/tmp/curves.png") == "png"
    assert picture_format("/tmp/Curves.SVG") == "svg"
    with pytest.raises(ValueError, match="cannot export as .bmp; use .png or .svg"):
        picture_format("/tmp/curves.bmp")
    with pytest.raises(ValueError, match="a file without an extension"):
        picture_format("/tmp/curves")


def test_a_name_typed_without_an_extension_gets_the_formats():
    assert with_suffix("/tmp/curves", ".svg") == "/tmp/curves.svg"
    assert with_suffix("/tmp/curves.png", ".svg") == "/tmp/curves.png"   # the user's own
    assert with_suffix("", ".png") == ""                                # cancelled


def test_the_button_offers_the_data_only_where_there_is_a_table():
    assert export_tip("training curves", True) == \
        "Save the training curves as a picture or its data as CSV"
    assert export_tip("attention map", False) == "Save the attention map as a picture"
    assert sorted(FILTERS) == ["csv", "png", "svg"] and FILTERS["svg"].endswith("(*.svg)")
