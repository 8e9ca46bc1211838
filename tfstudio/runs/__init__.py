"""The run folder: what a training run leaves on disk and everything else reads back.

``RunFolder`` (graph, config, tokenizer, metrics, checkpoints), ``TrainConfig`` (a run's
settings) and the atomic safetensors checkpoints. It sits below the trainer, the probes and the
exporters, which all read runs, and above the data layer and the compiler, which it uses to
rebuild a run's tokenizer and model.
"""
from .checkpoint import CheckpointError, latest_checkpoint, load_checkpoint, save_checkpoint
from .config import TrainConfig
from .folder import RunError, RunFolder

__all__ = ["CheckpointError", "latest_checkpoint", "load_checkpoint", "save_checkpoint",
           "TrainConfig", "RunError", "RunFolder"]
