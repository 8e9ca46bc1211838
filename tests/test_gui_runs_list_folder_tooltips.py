"""The Runs list names each run's folder: the Folder column is the last and is not widened to
its text, so a long path is cut at the panel's edge; hovering it shows the whole path, on every
row, also after the rows are rebuilt."""
from __future__ import annotations

from tfstudio.gui.training.history import RunRecord
from tfstudio.gui.training.runs_view import COLUMNS, RunsView


def test_each_runs_row_tooltip_names_its_whole_folder_path(qtbot, tmp_path):
    deep = tmp_path / ("experiments-" + "x" * 60) / "attention-variants" / "mqa-seed-7"
    paths = [str(deep), str(tmp_path / "runs" / "tiny-gpt-0941")]
    records = [RunRecord(path=p, architecture=name, status="completed", steps=20)
               for p, name in zip(paths, ["tiny-llama", "tiny-gpt"])]
    view = RunsView()
    qtbot.addWidget(view)
    view.resize(700, 300)
    view.show()
    view.set_records(records, shown=set())
    folder = COLUMNS.index("Folder")

    def tooltips() -> list[str]:
        return [view.tree.topLevelItem(i).toolTip(folder)
                for i in range(view.tree.topLevelItemCount())]

    assert tooltips() == paths
    # the path does not fit its column: the tooltip is where it can be read whole
    width = view.tree.fontMetrics().horizontalAdvance(paths[0])
    assert view.tree.columnWidth(folder) < width
    view.set_note(paths[1], "the newest checkpoint is damaged: step 10 is shown")  # a rebuild
    assert tooltips() == paths


def test_one_corpus_has_one_name_in_the_runs_list(qtbot, tmp_path):
    """The Corpus column showed "sample" (a run from the command line) and "sample:medium"
    (one from the app) for the same stories."""
    records = [RunRecord(path=str(tmp_path / name), architecture="tiny-gpt", corpus=corpus)
               for name, corpus in (("a", "sample"), ("b", "sample:medium"),
                                    ("c", "sample:small"), ("d", "task:reverse"))]
    view = RunsView()
    qtbot.addWidget(view)
    view.set_records(records, shown=set())
    column = COLUMNS.index("Corpus")
    assert [view.tree.topLevelItem(i).text(column) for i in range(4)] == \
        ["sample:medium", "sample:medium", "sample:small", "task:reverse"]
