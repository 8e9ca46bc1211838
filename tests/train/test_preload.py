"""What a training process imports, imported without the cyclic collector and then frozen."""
import gc
import subprocess
import sys
import textwrap

import pytest

from tfstudio.train import preload


def test_the_fork_server_preloads_every_module_of_a_run_frozen():
    """The fork server skips a preload name that fails to import without a word, and every
    run would then pay for its imports again: in a process of its own (freezing is for good),
    the server's preload brings in each module of a run, frozen."""
    from tfstudio.train.child import PRELOAD
    script = textwrap.dedent(f"""
        import gc, importlib, sys
        for name in {PRELOAD!r}:
            importlib.import_module(name)
        print(sorted(set({preload.TRAINING!r}) - set(sys.modules)), gc.get_freeze_count() > 0)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["[]", "True"]


@pytest.mark.parametrize("collector_on", [True, False])
def test_modules_import_with_the_collector_off_and_end_frozen_with_it_as_it_was(
        tmp_path, collector_on):
    # in a process of its own: freezing is for good
    (tmp_path / "looks_at_gc.py").write_text("import gc\nON_WHILE_IMPORTED = gc.isenabled()\n")
    script = textwrap.dedent(f"""
        import gc, sys
        sys.path.insert(0, {str(tmp_path)!r})
        {'' if collector_on else 'gc.disable()'}
        from tfstudio.train.preload import import_frozen
        import_frozen(["looks_at_gc"])
        import looks_at_gc
        print(looks_at_gc.ON_WHILE_IMPORTED, gc.isenabled(), gc.get_freeze_count() > 0)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", str(collector_on), "True"]


def test_a_failed_import_turns_the_collector_back_on():
    assert gc.isenabled()
    with pytest.raises(ModuleNotFoundError):
        preload.import_frozen(["tfstudio.no_such_module"])
    assert gc.isenabled()


def test_a_process_that_holds_the_modules_already_is_left_unfrozen():
    """A command called in process, where its modules are imported (a test worker), must not
    freeze what that process holds."""
    script = textwrap.dedent("""
        import gc, json
        from tfstudio.train.preload import import_frozen
        import_frozen(["json"])
        print(gc.get_freeze_count())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["0"]
