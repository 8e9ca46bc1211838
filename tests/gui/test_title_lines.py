"""How a block's title fits its header, without a font (gui/title_lines.py): measured here with
a monospace rule (each character 0.6 of the pixel size wide), so each case's answer is plain
arithmetic. test_title_wrap checks the same with the real bold font on a real block."""
from tfstudio.gui.title_lines import fitting_pixels, one_spaced, title_lines


def mono(pixels: float):
    return lambda text: len(text) * pixels * 0.6


def elide(width: float, pixels: float):
    """Qt's ElideRight, monospace: as many characters as fit with the "…"."""
    return lambda text: text[:int(width / (pixels * 0.6)) - 1] + "…"


def lines(text: str, width: float, pixels: float = 10):
    return title_lines(one_spaced(text), width, mono(pixels), elide(width, pixels))


def test_a_title_that_fits_keeps_its_size_and_a_wider_one_shrinks_to_the_size_that_fits():
    assert fitting_pixels("Self-attention", 12, 114.0, 10, mono) == 12      # 100.8 wide
    assert fitting_pixels("Mixture of experts", 12, 114.0, 10, mono) == 10   # 129.6 at 12
    assert mono(11)("Rotary embedding") <= 114 < mono(12)("Rotary embedding")
    assert fitting_pixels("Rotary embedding", 12, 114.0, 10, mono) == 11    # a little only


def test_a_title_shrinks_no_further_than_the_smallest_size():
    long = "Language-model head tied to embeddings"
    assert fitting_pixels(long, 12, 114.0, 10, mono) == 10                 # 228 wide at 10
    assert fitting_pixels(long, 13, 400.0, 11, mono) == 13                 # room enough


def test_a_title_that_fits_is_one_line_and_a_longer_one_wraps_keeping_most_words_first():
    assert lines("Self-attention", 114) == ["Self-attention"]
    assert lines("Grouped-query attention", 114) == ["Grouped-query", "attention"]
    assert lines("Rotary position embedding", 114) == ["Rotary position", "embedding"]
    assert lines("Rotary position embedding", 160) == ["Rotary position embedding"]


def test_one_word_too_wide_for_a_line_breaks_inside_it_and_only_then():
    word = "Supercalifragilisticattention"                                  # 29 characters
    assert lines(word, 100) == [word[:16], word[16:]]                      # 16 fit on a line
    assert lines("Feed-forward network", 100) == ["Feed-forward", "network"]  # between words


def test_the_second_line_is_elided_only_when_two_lines_cannot_hold_the_title():
    two = lines("Language-model head tied to embeddings", 100)             # 16 to a line
    assert two == ["Language-model", "head tied to em…"]                    # 23 left over
    assert lines("Language-model head", 100) == ["Language-model", "head"]  # held: not elided


def test_line_breaks_and_runs_of_spaces_in_a_title_read_as_one_space():
    assert one_spaced("word\n  word\tend") == "word word end"
    assert lines("word\n" * 2_000, 114)[0] == "word word word word"        # 19 characters fit
