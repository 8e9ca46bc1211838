"""The Runs list names each run's folder: the Folder column is the last and is not widened to
its text, so a long path is cut at the panel's edge; hovering it shows the whole path, on every
row, also after the rows are rebuilt. (Each row's cells and tooltips, without Qt:
test_run_lines.py.)"""
from __future__ import annotations

from tfstudio.gui.training.history import RunRecord
from tfstudio.gui.training.run_lines import COLUMNS
from tfstudio.gui.training.runs_view import RunsView


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

