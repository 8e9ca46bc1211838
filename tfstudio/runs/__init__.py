"""The run folder: what a training run leaves on disk and everything else reads back.

``RunFolder`` (graph, config, tokenizer, metrics, checkpoints, the writer's lock),
``TrainConfig`` (a run's settings), the atomic safetensors checkpoints that verify themselves
(checkpoint.py), one writer per folder (lock.py) and the memory pre-flight (preflight.py). It
sits below the trainer, the probes and the exporters, which all read runs, and above the data
layer and the compiler, which it uses to rebuild a run's tokenizer and model.
"""
import importlib

# each name is imported from its module when first used, so a torch-free part (the memory
# pre-flight that `tfstudio inspect` shares, the refused-write words, RunFolder and finding or
# verifying checkpoints) loads without torch; checkpoint.py imports it to write or read tensors
_HOMES = {"CheckpointChoice": "checkpoint", "CheckpointError": "checkpoint",
          "find_checkpoint": "checkpoint", "latest_checkpoint": "checkpoint",
          "load_checkpoint": "checkpoint", "save_checkpoint": "checkpoint",
          "TrainConfig": "config", "RunError": "folder", "RunFolder": "folder",
          "RunLock": "lock", "RunLocked": "lock", "MemoryRefusal": "preflight",
          "check_model_memory": "preflight", "check_training_memory": "preflight"}
__all__ = list(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
