"""Which open layer groups the canvas points at from its edges, without a window
(gui/out_of_view.py): a group with under three quarters of it in view gets a pill on the
edge towards it, whose words name it with its copies."""
from tfstudio.gui.out_of_view import focus_rect, pill_text, pill_tip, side_out_of_view

VIEW = (0.0, 0.0, 1000.0, 600.0)


def test_a_group_mostly_in_view_gets_no_pill():
    assert side_out_of_view((100, 100, 400, 300), VIEW) is None          # all of it
    assert side_out_of_view((100, 400, 400, 240), VIEW) is None          # 5/6 of it
    assert side_out_of_view((100, 100, 0, 300), VIEW) is None            # nothing drawn


def test_a_group_mostly_out_of_view_gets_a_pill_on_the_edge_towards_it():
    assert side_out_of_view((100, 500, 400, 300), VIEW) == "below"       # a third in view
    assert side_out_of_view((100, -250, 400, 300), VIEW) == "above"
    assert side_out_of_view((900, 100, 400, 300), VIEW) == "right"
    assert side_out_of_view((-350, 100, 400, 300), VIEW) == "left"
    assert side_out_of_view((3000, 3000, 400, 300), VIEW) is not None    # wholly out


def test_a_wide_layer_cut_at_the_right_but_hanging_below_reads_below():
    # its centre is further past the bottom, in view heights, than past the right edge
    assert side_out_of_view((400, 450, 1200, 400), VIEW) == "below"
    assert side_out_of_view((400, 100, 1200, 400), VIEW) == "right"      # lifted: right


def test_the_pill_names_the_group_with_its_copies_and_points_to_it():
    assert pill_text("decoder layer", 6, "below") == "▼ decoder layer ×6"
    assert pill_text("encoder layer", 1, "left") == "◀ encoder layer"
    assert pill_tip("decoder layer", 6).startswith("decoder layer ×6 is out of view: click")


def test_too_big_to_fit_the_view_shows_the_topmost_open_group_first_from_its_left_edge():
    everything = (-100.0, -50.0, 3000.0, 2000.0)
    view = (0.0, 0.0, 1000.0, 600.0)
    encoder = ((400.0, 0.0), (390.0, -5.0, 500.0, 700.0))
    decoder = ((0.0, 900.0), (-10.0, 895.0, 500.0, 700.0))     # left of it, but lower
    assert focus_rect([decoder, encoder], everything, view) == encoder[1]
    wide = ((0.0, 0.0), (-10.0, -5.0, 2500.0, 700.0))          # wider than the view
    assert focus_rect([wide], everything, view) == (-20.0, -5.0, 1000.0, 700.0)
    assert focus_rect([], everything, view) == (-110.0, -50.0, 1000.0, 600.0)  # the start
