"""What Enter in the palette's search field does, without a window (gui/search_results.py's
palette_enter): a setting the query names exactly, else the best block shown. test_editing's
palette test types into the real palette."""
from tfstudio.graph import all_specs
from tfstudio.gui.fuzzy import palette_matches
from tfstudio.gui.layer_switches import matching_settings
from tfstudio.gui.search_results import palette_enter


def enter(query: str, layer: str | None = "decoder layer"):
    scores = palette_matches(query, all_specs())
    return palette_enter(matching_settings(query, layer), list(scores), scores)


def test_enter_applies_a_setting_the_query_names_whole_before_any_block():
    chosen = enter("rope")
    assert (chosen.key, chosen.value) == ("position", "rope")
    assert enter("attn") == "attention"                            # no setting named: a block


def test_enter_adds_the_best_block_shown_not_the_first():
    scores = {"dropout": 0.4, "attention": 0.9, "norm": 0.6}
    assert palette_enter([], ["dropout", "attention", "norm"], scores) == "attention"
    assert palette_enter([], ["dropout", "norm"], scores) == "norm"   # the best one shown
    started = matching_settings("ro", "decoder layer")               # only started: no Enter
    assert not any(h.exact for h in started)
    assert palette_enter(started, [], {}) is None                  # nothing shown: nothing
