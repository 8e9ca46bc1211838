"""The canvas's grid (gui/canvas_grid.py), without a QApplication: when it shows, where its
lines fall and which are major."""
from tfstudio.gui.canvas_grid import MAJOR_EVERY, grid_lines, on_grid, shows_grid, snaps


def test_the_grid_shows_from_thirty_percent_and_not_below():
    assert not shows_grid(0.29)
    assert shows_grid(0.3)
    assert shows_grid(1.0)


def test_lines_start_at_the_step_at_or_before_the_left_edge_and_stop_before_the_right():
    assert [at for at, _ in grid_lines(45.0, 100.0, 20.0)] == [40.0, 60.0, 80.0]
    assert [at for at, _ in grid_lines(40.0, 101.0, 20.0)] == [40.0, 60.0, 80.0, 100.0]
    assert [at for at, _ in grid_lines(-15.0, 10.0, 20.0)] == [-20.0, 0.0]


def test_every_fifth_line_counted_from_zero_is_major_on_both_sides_of_it():
    lines = grid_lines(-120.0, 120.0, 20.0)
    assert MAJOR_EVERY == 5
    assert [at for at, major in lines if major] == [-100.0, 0.0, 100.0]
    assert dict(lines)[20.0] is False and dict(lines)[-20.0] is False


def test_a_line_a_little_short_of_a_multiple_of_five_steps_is_still_major():
    """The lines are reached by adding the step again and again; with a step like 0.3 the sum
    falls a few ulps short (2.9999999999999996), and that line is still the tenth, a major one."""
    lines = grid_lines(0.0, 7.6, 0.3)
    assert lines[10][0] < 3.0 and lines[10][1]
    assert [round(at, 6) for at, major in lines if major] == [0.0, 1.5, 3.0, 4.5, 6.0, 7.5]


def test_a_block_goes_on_the_grid_while_dragged_or_where_a_move_lands_not_from_a_file():
    assert snaps(True, dragging=True)
    assert snaps(True, dragging=False, force=True)      # where a Move command puts it
    assert not snaps(True, dragging=False)              # read from a file: kept exact
    assert not snaps(False, dragging=True, force=True)  # snapping off: never


def test_a_point_goes_to_the_nearest_grid_point_either_way_and_below_zero():
    assert on_grid(29.0, 31.0, 20.0) == (20.0, 40.0)
    assert on_grid(-29.0, -31.0, 20.0) == (-20.0, -40.0)
    assert on_grid(47.0, 53.0, 10.0) == (50.0, 50.0)
