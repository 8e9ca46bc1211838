"""Read-outs of a live model, as plain numpy data: what the GUI's views draw.

Every function takes a compiled model (``tfstudio.compiler``) and returns numpy arrays, floats
and strings, never live tensors, so the results can cross from the training thread to the GUI
and be saved to disk. The model's train/eval mode and its attention ``capture`` flags are
restored afterwards.

- :mod:`.inputs`: the probe text as model inputs (tokens, source/target for encoder-decoders)
- :mod:`.attention`: attention weights per layer and head, with the mask that applied
- :mod:`.positions`: positional data per scheme (sinusoidal, learned, RoPE, ALiBi)
- :mod:`.routing`: mixture-of-experts load and the expert each probe token went to
- :mod:`.telemetry`: gradient norm and activation RMS per graph node
- :mod:`.snapshot`: all of it in one forward pass, saved as ``RUN_DIR/probes/step-N.npz``
"""
from .attention import AttentionMap, attention_maps
from .inputs import ProbeInputs, default_probe_text, probe_inputs
from .positions import position_data, rope_score
from .roles import stream_roles
from .routing import expert_routing
from .snapshot import SnapshotStore, snapshot_for_run, take_snapshot
from .telemetry import ActivationRecorder, gradient_norms, node_values

__all__ = [
           "ActivationRecorder",
           "AttentionMap",
           "ProbeInputs",
           "SnapshotStore",
           "attention_maps",
           "default_probe_text",
           "expert_routing",
           "gradient_norms",
           "node_values",
           "position_data",
           "probe_inputs",
           "rope_score",
           "snapshot_for_run",
           "stream_roles",
           "take_snapshot",
]
