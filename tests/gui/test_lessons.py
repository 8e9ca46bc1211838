"""The Lessons dock: the course listed in order, a lesson's claim shown when picked, and its
base graph put on the canvas with the blocks its variants change selected."""
from __future__ import annotations

import html

from tfstudio.experiments.lessons import LESSONS
from tfstudio.experiments.lessons.course import ORDER, differing_nodes
from tfstudio.graph.compare import same_model
from tfstudio.gui.lessons_panel import EMPTY_HINT, NAME_ROLE
from tfstudio.presets import load_preset


def _pick(window, name):
    panel = window.lessons
    for row in range(panel.list.count()):
        if panel.list.item(row).data(NAME_ROLE) == name:
            panel.list.setCurrentRow(row)
            return panel
    raise AssertionError(f"{name} is not listed")


def test_help_menu_shows_the_course_in_the_story_order(make_window):
    window = make_window(load_preset("tiny-lstm"))
    assert not window.lessons.isVisible()          # behind the Blocks tab at start
    window.show_lessons()
    panel = window.lessons
    assert panel.isVisible()
    names = [panel.list.item(r).data(NAME_ROLE) for r in range(panel.list.count())]
    assert names == list(ORDER)
    assert panel.details.text() == EMPTY_HINT and not panel.open_button.isEnabled()
    help_menu = [m for m in window.menuBar().actions() if m.text() == "&Help"][0].menu()
    assert any("course" in a.text() for a in help_menu.actions())
    # "Put on the canvas": the base graph, the blocks its variants change selected (which
    # they are: test_lesson_lines)
    _pick(window, "scale").open_button.click()
    base, changed = differing_nodes("scale")
    assert same_model(window.session.root, base) and changed
    assert sorted(window.scene.selected_node_ids()) == sorted(changed)


def test_train_it_starts_the_lesson_in_the_compare_view(open_training_window, monkeypatch):
    from tfstudio.gui.training.compare_view import CompareView

    started = []
    monkeypatch.setattr(CompareView, "run_lesson", lambda self, name: started.append(name))
    window = open_training_window()
    window.show_lessons()
    _pick(window, "interpolation")
    assert not window.lessons.train_button.isEnabled()      # it trains on its own schedule
    _pick(window, "activations").train_button.click()
    panel = window.training.panel
    assert started == ["activations"]
    assert panel.tabs.tabText(panel.tabs.currentIndex()) == "Compare"
    assert window.training.dock.isVisible()


def test_the_course_at_1366x768_keeps_the_window_size_and_shows_the_whole_claim(
        open_training_window, qtbot):
    """Help > The course in the Train workspace grew a 1366x768 window to 1366x774 (the
    claim's wrapped label set the dock's minimum height) and cut the claim off at "Claim:
    gated feed-forward layers"."""
    window = open_training_window((1366, 768))
    window.training.show_panel()
    qtbot.wait(50)
    before = window.size()
    window.show_lessons()
    for name in ORDER:
        panel = _pick(window, name)
        qtbot.wait(10)
        assert window.size() == before, name
        # the whole text reachable: the label is as tall as its wrapped text needs, in a
        # scroll area when the dock is shorter
        label = panel.details
        assert label.height() >= label.heightForWidth(label.width()), name
        assert html.escape(LESSONS[name].claim) in label.text()
