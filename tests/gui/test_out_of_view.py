"""Which open layer groups the canvas points at from its edges, without a window
(gui/out_of_view.py): a group with under three quarters of it in view gets a pill on the
edge towards it, whose words name it with its copies."""
from tfstudio.gui.out_of_view import focus_rect, pill_spot, pill_text, pill_tip, side_out_of_view

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


CANVAS = (1000, 600)   # pixels
PILL = (120, 22)


def test_pills_line_up_from_the_middle_of_a_horizontal_edge_and_the_top_of_a_vertical_one():
    x, y, after = pill_spot("below", PILL, CANVAS, 0.0, [])
    assert (x, y) == (499 - 60, 599 - 22 - 8) and after == 128       # centred, 8 px up
    assert pill_spot("below", PILL, CANVAS, after, [])[:2] == (439 + 128, 569)   # the next one
    assert pill_spot("above", PILL, CANVAS, 0.0, [])[:2] == (439, 8)
    x, y, after = pill_spot("right", PILL, CANVAS, 0.0, [])
    assert (x, y) == (999 - 120 - 8, 38) and after == 30             # stacked downwards
    assert pill_spot("left", PILL, CANVAS, after, [])[:2] == (8, 68)


def test_a_pill_slides_along_its_edge_to_the_nearest_stretch_clear_of_a_blocks_title():
    title = (430, 560, 200, 30)                                     # under the middle of the edge
    x, y, _ = pill_spot("below", PILL, CANVAS, 0.0, [title])
    assert (x, y) == (439 - 144, 569)                               # 16 px steps, nearer side first
    assert x + PILL[0] <= title[0]                                  # clear of it
    assert pill_spot("below", PILL, CANVAS, 0.0, [(0, 0, 1000, 30)])[:2] == (439, 569)  # elsewhere


def test_a_pill_stays_put_when_no_stretch_of_its_edge_inside_the_canvas_has_room():
    assert pill_spot("below", PILL, CANVAS, 0.0, [(0, 560, 1000, 40)])[:2] == (439, 569)
    narrow = (300, 600)                                             # free only from x=250: 50 px
    assert pill_spot("below", PILL, narrow, 0.0, [(0, 560, 250, 40)])[:2] == (89, 569)
    assert pill_spot("below", PILL, narrow, 0.0, [(0, 560, 160, 40)])[:2] == (89 + 80, 569)
