"""Read-outs of a live model, as plain numpy data: what the GUI's views draw.

Every function takes a compiled model (``tfstudio.compiler``) and returns numpy arrays, floats
and strings, never live tensors, so the results can cross from the training thread to the GUI
and be saved to disk. They read what the model computed at its hook points
(:mod:`tfstudio.nn.hooks`) instead of recomputing it, and leave its train/eval mode and its
kept state as they were.

- :mod:`.inputs`: the probe text as model inputs (tokens, source/target for encoder-decoders)
- :mod:`.attention`: attention weights per layer and head, with the mask that applied
- :mod:`.positions`: positional data per scheme (sinusoidal, learned, RoPE, ALiBi)
- :mod:`.routing`: mixture-of-experts load and the expert each probe token went to
- :mod:`.telemetry`: gradient norm and activation RMS per graph node
- :mod:`.snapshot`: all of it in one forward pass, saved as ``RUN_DIR/probes/step-N.npz``
- :mod:`.walk`: the forward pass step by step, read from the blocks' hook points (every
  intermediate tensor, named, with formulas, and each step's picture of the picked token)
- :mod:`.lens`: the logit lens, each layer's stream read through the final norm and head
- :mod:`.ablation`: a head, an expert or a sublayer switched off, and what changed
- :mod:`.roles`: the stream each block reads, and each head's previous-token and induction
  scores
- :mod:`.embeddings`: the embedding table in 2D, its replay over checkpoints, one token through
  the layers in two contexts, and the angle between token and position vectors
"""
from .ablation import AblationEffect, ablated, ablation_effect, parse_target
from .attention import AttentionMap, attention_maps
from .embeddings import (embedding_map, embedding_replay, position_angles,
                         token_through_layers)
from .inputs import ProbeInputs, default_probe_text, probe_inputs
from .positions import position_data, rope_score
from .lens import LogitLens, logit_lens
from .roles import head_scores, stream_roles
from .routing import expert_routing
from .snapshot import SnapshotStore, snapshot_for_run, take_snapshot
from .telemetry import ActivationRecorder, gradient_norms, node_values
from .walk import Step, Walk, forward_walk

__all__ = [
           "AblationEffect",
           "ActivationRecorder",
           "AttentionMap",
           "ProbeInputs",
           "SnapshotStore",
           "LogitLens",
           "Step",
           "Walk",
           "ablated",
           "ablation_effect",
           "attention_maps",
           "default_probe_text",
           "embedding_map",
           "embedding_replay",
           "expert_routing",
           "forward_walk",
           "gradient_norms",
           "head_scores",
           "logit_lens",
           "node_values",
           "parse_target",
           "position_angles",
           "position_data",
           "probe_inputs",
           "rope_score",
           "snapshot_for_run",
           "stream_roles",
           "take_snapshot",
           "token_through_layers",
]
