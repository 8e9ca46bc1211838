"""The palette's filter (gui/fuzzy.py's palette_matches), without a QApplication: the tier it
keeps changes with the best match there is."""
from tfstudio.graph import all_specs
from tfstudio.gui.fuzzy import CLOSE_MATCH, WHOLE_WORD, block_score, palette_matches

SPECS = list(all_specs())


def _every_match(query):
    return {s.type for s in SPECS if block_score(query, s, descriptions=False) is not None}


def test_a_whole_word_hides_the_blocks_that_only_spell_it():
    kept = palette_matches("norm", SPECS)
    assert kept and all(v >= WHOLE_WORD for v in kept.values())
    assert _every_match("norm") - set(kept)  # scattered letters matched too, and were dropped


def test_without_a_whole_word_close_matches_hide_scattered_letters():
    kept = palette_matches("att", SPECS)
    assert "attention" in kept and all(CLOSE_MATCH <= v < WHOLE_WORD for v in kept.values())
    assert _every_match("att") - set(kept)


def test_with_only_scattered_letters_every_match_is_kept():
    assert set(palette_matches("lnrm", SPECS)) == _every_match("lnrm") != set()
    assert palette_matches("xyzq", SPECS) == {}
    assert set(palette_matches("", SPECS)) == {s.type for s in SPECS}
