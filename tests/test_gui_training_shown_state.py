"""One shown state for the Train workspace (issue 39): which run, which step, which text, held
in a Qt-free model (gui/training/shown_state.py), and each case the issue found in the
transitions between runs, steps and texts."""
from __future__ import annotations

import os
import shutil


def test_a_run_added_from_disk_is_named_by_its_folder_time_not_a_file_mtime(finished_run,
                                                                            tmp_path):
    """The window that trained a run calls it "tiny-gpt · 04:33:47" (folder 20261206-043347);
    added after a restart it read the time config.json was last modified (04:34:16)."""
    from tfstudio.gui.training.history import RunHistory

    stamped = shutil.copytree(finished_run, tmp_path / "runs" / "20261206-043347-tiny-gpt")
    later = os.stat(stamped / "config.json").st_mtime + 29
    os.utime(stamped / "config.json", (later, later))
    history = RunHistory(tmp_path)
    assert history.record_for_folder(stamped).label == "tiny-gpt · 04:33:47"
    # a folder the CLI named: its own name, never a modification time
    named = shutil.copytree(finished_run, tmp_path / "R")
    assert history.record_for_folder(named).label == "tiny-gpt · R"
    # and a run the app trains is named by the folder it makes
    run_dir = history.new_run_dir("tiny-gpt")
    from tfstudio.gui.training.history import folder_started
    assert folder_started(run_dir)[11:] == run_dir.name[9:11] + ":" + run_dir.name[11:13] + \
        ":" + run_dir.name[13:15]
