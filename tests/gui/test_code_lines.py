"""What the generated-code window says over the code, without a window (gui/code_lines.py);
test_files opens the real window on a graph that compiles."""
from tfstudio.gui.code_lines import REFUSED, code_status


def test_compiled_code_is_counted_in_lines_and_the_line_says_how_to_copy_it():
    line, role = code_status("import torch\n\nclass Model:\n    pass", "")
    assert line.startswith("4 lines, generated from the graph.") and role == "muted"
    assert "Ctrl+A, Ctrl+C" in line
    assert code_status("x = 1", "")[0].startswith("1 lines")     # one line of code: 1


def test_a_graph_that_does_not_compile_points_to_the_problems_not_to_a_count():
    line, role = code_status("", "heads must divide d_model")
    assert (line, role) == (REFUSED, "error") and "problems panel" in line
    assert code_status("x = 1", "a late error")[1] == "error"      # an error wins over code
