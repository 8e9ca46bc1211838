"""The block palette's rows (gui/palette_rows.py), without a QApplication: the families in the
story order under their titles, a block's tooltip, and what a query leaves shown."""
from tfstudio.graph import families
from tfstudio.gui.fuzzy import palette_matches
from tfstudio.gui.layer_switches import matching_settings
from tfstudio.gui.palette_rows import (FAMILY_ORDER, block_tooltip, family_order, family_title,
                                       shown_rows)
from tfstudio.gui.search_results import palette_enter


def _by_family():
    return {family: [spec.type for spec in specs] for family, specs in families().items()}


def test_families_come_in_the_order_a_model_is_read_and_unknown_ones_after_alphabetically():
    assert family_order(["output", "attention", "input"]) == ["input", "attention", "output"]
    assert family_order(["zeta", "output", "alpha", "mu", "kappa", "beta"]) == [
        "output", "alpha", "beta", "kappa", "mu", "zeta"]
    catalogue = family_order(families())
    assert catalogue[0] == "input" and catalogue[-1] == "output"
    assert set(catalogue) <= set(FAMILY_ORDER)         # every family of the catalogue is placed


def test_a_family_is_shown_under_its_plural_title_or_its_name_capitalised():
    assert family_title("output") == "Output heads"
    assert family_title("norm") == "Normalisation"
    assert family_title("mixing") == "Mixing"


def test_a_query_leaves_only_the_families_with_a_match_and_no_query_leaves_all():
    specs = [spec for specs in families().values() for spec in specs]
    rows = shown_rows(palette_matches("head", specs), _by_family())
    assert rows == {"output": ["lm_head", "mlm_head", "seq2seq_head"]}
    everything = shown_rows(palette_matches("", specs), _by_family())
    assert everything == _by_family()
    assert sum(len(v) for v in everything.values()) == len(specs)


def test_a_blocks_tooltip_names_it_says_what_it_does_and_how_to_add_it():
    tip = block_tooltip("Dropout", "Zeroes activations at random while training.")
    assert tip.startswith("<qt><b>Dropout</b><br>Zeroes activations")
    assert "Drag onto the canvas, or double-click." in tip


def test_palette_filter_shows_only_matches():
    """What palette.filter leaves shown and what Enter in its field adds (palette_enter of the
    rows shown); test_search_words types into the real field and sees the block land."""
    specs = [spec for specs in families().values() for spec in specs]

    def visible(query: str) -> list[str]:
        return [t for types in shown_rows(palette_matches(query, specs), _by_family()).values()
                for t in types]
    assert set(visible("head")) == {"lm_head", "mlm_head", "seq2seq_head"}
    assert len(visible("")) == sum(len(v) for v in families().values())
    # Enter in the search field (or a double-click) drops the first match
    assert palette_enter(matching_settings("rnn", None), visible("rnn"),
                         palette_matches("rnn", specs)) == "rnn"
