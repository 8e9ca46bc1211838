"""The run folder: what a training run leaves on disk and everything else reads back.

``RunFolder`` (graph, config, tokenizer, metrics, checkpoints, the writer's lock),
``TrainConfig`` (a run's settings), the atomic safetensors checkpoints that verify themselves
(checkpoint.py), one writer per folder (lock.py) and the memory pre-flight (preflight.py). It
sits below the trainer, the probes and the exporters, which all read runs, and above the data
layer and the compiler, which it uses to rebuild a run's tokenizer and model.
"""
from .checkpoint import (CheckpointChoice, CheckpointError, find_checkpoint, latest_checkpoint,
                         load_checkpoint, save_checkpoint)
from .config import TrainConfig
from .folder import RunError, RunFolder
from .lock import RunLock, RunLocked
from .preflight import MemoryRefusal, check_model_memory, check_training_memory

__all__ = ["CheckpointChoice", "CheckpointError", "find_checkpoint", "latest_checkpoint",
           "load_checkpoint", "save_checkpoint", "TrainConfig", "RunError", "RunFolder",
           "RunLock", "RunLocked", "MemoryRefusal", "check_model_memory",
           "check_training_memory"]
