"""What the File menu says and remembers (gui/file_lines.py), without a QApplication: the save
failure's line flips with whether the file was there, and the recent list keeps a file once."""
import errno

from tfstudio.gui.file_lines import (MAX_RECENT, recent_paths, recovery_question, save_failure,
                                     save_start, unsaved_question, with_recent, with_suffix,
                                     without_gone)


def test_a_refused_save_says_whether_the_file_there_is_kept(tmp_path):
    target = tmp_path / "model.json"
    full = OSError(errno.ENOSPC, "No space left on device")
    assert save_failure(full, target) == (f"the disk of {tmp_path} is full while saving "
                                          "model.json; no file was written; free space and "
                                          "save again")
    target.write_text("{}")
    assert "; model.json is as it was; " in save_failure(full, target)


def test_another_failure_names_the_file_and_what_to_choose(tmp_path):
    target = tmp_path / "model.json"
    line = save_failure(OSError(errno.ENOENT, "No such file or directory"), target)
    assert line == (f"Could not save {target}: No such file or directory. Choose another "
                    "folder or file name.")


def test_the_recent_list_puts_a_file_first_once_and_keeps_at_most_eight(tmp_path):
    files = [tmp_path / f"g{i}.json" for i in range(MAX_RECENT + 2)]
    recent = []
    for f in files:
        recent = with_recent(recent, f)
    assert recent == [str(f) for f in reversed(files)][:MAX_RECENT]
    assert with_recent(recent, files[-3]) == [str(files[-3])] + \
        [p for p in recent if p != str(files[-3])]  # reopened: moved first, not repeated
    assert with_recent([], tmp_path / "sub" / ".." / "a.json") == [str(tmp_path / "a.json")]


def test_settings_hold_recent_files_as_a_list_one_string_or_nothing():
    assert recent_paths(None) == [] and recent_paths([]) == []
    assert recent_paths("/a.json") == ["/a.json"]
    assert recent_paths(["/a.json", "/b.json"]) == ["/a.json", "/b.json"]


def test_the_questions_name_the_file_and_where_recovered_work_came_from(tmp_path):
    assert unsaved_question("model.json") == \
        "Save the changes to model.json before closing it?"
    long = unsaved_question("x" * 5_000 + "\n" + "y" * 5_000)    # a user's name: one line
    assert "\n" not in long and len(long) < 100
    came = recovery_question(tmp_path / "mine.json")
    assert came.endswith(f"unsaved graph (from {tmp_path / 'mine.json'}) was found. Recover it?")
    assert recovery_question(None).endswith("unsaved graph was found. Recover it?")


def test_a_recent_file_gone_is_dropped_from_the_list_and_said(tmp_path):
    kept, gone = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    recent, line = without_gone([gone, kept], gone)
    assert recent == [kept]
    assert line == f"{gone} no longer exists; it was removed from the recent files."


def test_a_save_dialog_starts_at_the_graphs_name_and_a_name_typed_bare_gets_the_suffix(tmp_path):
    assert save_start(str(tmp_path), "tiny-gpt", ".json") == str(tmp_path / "tiny-gpt.json")
    assert save_start(str(tmp_path), "my model.json", ".png") == str(tmp_path / "my model.png")
    assert save_start(str(tmp_path), "v1.2.json", ".json") == str(tmp_path / "v1.2.json")
    assert with_suffix("/d/my model", ".json") == "/d/my model.json"
    assert with_suffix("/d/my model.json", ".json") == "/d/my model.json"
    assert with_suffix("/d/canvas.svg", ".png") == "/d/canvas.svg"    # the name typed holds
    assert with_suffix("", ".json") == ""                              # cancelled
