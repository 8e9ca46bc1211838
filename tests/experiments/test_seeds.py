"""Run seeds as written ("1,2,3"), read once for the lesson command and Compare in the app."""
import pytest

from tfstudio.experiments.seeds import read_seeds


def test_seeds_are_distinct_whole_numbers_and_a_mistake_says_how_to_write_them():
    assert read_seeds("1, 2,3,") == [1, 2, 3]
    for text, why in (("1;2", "--seeds takes comma-separated whole numbers such as 1,2,3; "
                              "got '1;2'"),
                      ("1,1", "--seeds needs distinct seeds such as 1,2,3; got '1,1'"),
                      (" ", "--seeds needs distinct seeds")):
        with pytest.raises(ValueError, match=why):
            read_seeds(text)


def test_the_app_names_its_own_field_in_the_line():
    with pytest.raises(ValueError, match="^Seeds needs distinct seeds such as 1,2,3; got '2,2'$"):
        read_seeds("2,2", "Seeds")
