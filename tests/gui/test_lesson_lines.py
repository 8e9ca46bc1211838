"""What the Lessons dock says, without a window (gui/lesson_lines.py): the course's rows in
the story's order, a picked lesson's claim and what it varies, whether Compare can train it,
and what "Put on the canvas" opens."""
from tfstudio.experiments.lessons import LESSONS
from tfstudio.experiments.lessons.course import ORDER, course, differing_nodes
from tfstudio.graph.compare import same_model
from tfstudio.gui.lesson_lines import course_row, lesson_page, trains_in_compare
from tfstudio.presets import load_preset


def test_the_course_rows_are_numbered_in_the_storys_order_without_the_word_lesson():
    rows = [course_row(i, lesson) for i, lesson in enumerate(course(), 1)]
    assert [r.split(": ")[0] for r in rows] == [f"{i}. {n}" for i, n in enumerate(ORDER, 1)]
    titled = [lesson for lesson in course() if lesson.title.startswith("Lesson: ")]
    assert titled                                     # the prefix is there to be dropped
    assert not any(": Lesson: " in r for r in rows)


def test_picking_a_lesson_shows_its_claim_and_what_it_varies():
    text = lesson_page(LESSONS["activations"], "about 3 minutes")
    assert LESSONS["activations"].claim.split(",")[0] in text
    assert "ffn_activation = relu, gelu, swiglu, geglu" in text
    assert "tfstudio lesson activations" in text and "Estimated time: about 3 minutes." in text
    sampling = lesson_page(LESSONS["sampling"], "about 1 minute")
    assert "ffn_activation" not in sampling              # nothing kept from the last pick
    assert "then measures it" in sampling


def test_only_a_comparison_of_variants_trains_in_compare():
    assert trains_in_compare(LESSONS["activations"])
    assert LESSONS["interpolation"].run is not None      # it trains on its own schedule
    assert not trains_in_compare(LESSONS["interpolation"])


def test_put_on_the_canvas_opens_the_base_with_the_changed_blocks_selected():
    """What the Lessons dock's "Put on the canvas" opens (differing_nodes, which
    lessons_panel asks): the lesson's base graph and the blocks its variants change; the
    window shows it in test_lessons."""
    base, changed = differing_nodes("scale")
    assert same_model(base, load_preset("tiny-gpt"))
    assert sorted(changed) == ["embed", "layers"]
    assert differing_nodes("sampling")[1] == []
