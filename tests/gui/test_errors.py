"""The editor's last resort for a bug in a slot (gui/errors.py), without a window: the hook
logs the traceback and writes it to errors.log, prints it when there is no window to show it
on, and lets Ctrl+C through to the hook before it."""
import sys

from tfstudio.gui.errors import install_excepthook, report_exception


def _raised(exc: BaseException):
    """``sys.exc_info()`` of ``exc`` raised: what a hook is handed."""
    try:
        raise exc
    except BaseException as caught:
        return type(caught), caught, caught.__traceback__


def test_without_a_window_an_uncaught_exception_is_written_to_the_log_and_printed(tmp_path,
                                                                                  capsys):
    log = tmp_path / "errors.log"
    report_exception(None, *_raised(RuntimeError("boom in a slot")), log)
    assert "RuntimeError: boom in a slot" in log.read_text()
    assert "RuntimeError: boom in a slot" in capsys.readouterr().err
    report_exception(None, *_raised(ValueError("second")), log)
    assert "boom in a slot" in log.read_text() and "ValueError: second" in log.read_text()
    # a log that cannot be written is no second failure: it is still printed
    report_exception(None, *_raised(ValueError("third")), tmp_path / "gone" / "errors.log")
    assert "ValueError: third" in capsys.readouterr().err


def test_the_hook_reports_a_bug_and_passes_ctrl_c_to_the_hook_before_it(tmp_path):
    seen = []
    saved = sys.excepthook
    sys.excepthook = lambda *info: seen.append(info[0])
    log = tmp_path / "errors.log"
    try:
        install_excepthook(lambda: None, log)
        sys.excepthook(*_raised(KeyboardInterrupt()))
        assert seen == [KeyboardInterrupt] and not log.exists()
        sys.excepthook(*_raised(RuntimeError("boom")))
        assert seen == [KeyboardInterrupt] and "RuntimeError: boom" in log.read_text()
    finally:
        sys.excepthook = saved
