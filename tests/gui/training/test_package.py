"""The training package's lazy entry point keeps its name once its submodules are imported."""
import importlib
import inspect


def test_attach_training_stays_a_function_after_the_attach_module_is_imported():
    module = importlib.import_module("tfstudio.gui.training.attach")  # as the fixtures do
    from tfstudio.gui.training import attach_training
    assert inspect.isfunction(attach_training)
    assert attach_training.__module__ == "tfstudio.gui.training"
    package = importlib.import_module("tfstudio.gui.training")
    assert package.attach is module  # the submodule lives under its own name, apart
    assert inspect.isfunction(package.attach_training)
