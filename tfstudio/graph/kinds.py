"""The architecture's axes, each spelt once: its values (as stored in graph files), their order
on the switches, and the words people see for them.

Every package outside ``graph/`` and ``blocks/`` names a value through these constants and asks
these tuples and label tables rather than spelling its own (``tests/test_kinds_one_home.py``
fails on a new raw literal), so adding a kind is one edit here. The block types are the one
axis kept in ``block_types.py``; what each kind *does* to a graph lives with its switch
(``switches.py``, ``placement.py``). Values are plain strings, as in the JSON files and the
generated code, so they compare equal to what a graph holds.
"""
from __future__ import annotations

# ----------------------------------------------------------------------- attention kind
# how many K/V heads serve the query heads (read from heads / kv_heads by switches.attention_kind_of)
MHA, GQA, MQA = "mha", "gqa", "mqa"
ATTENTION_KINDS = (MHA, GQA, MQA)
ATTENTION_KIND_LABELS = {MHA: "MHA", GQA: "GQA", MQA: "MQA"}

# ----------------------------------------------------------------------- norm placement
# where a residual sublayer's norms sit around its Add (placement.py recognises and rewrites it)
PRE, POST, POST_IN_RESIDUAL, SANDWICH = "pre", "post", "post-in-residual", "sandwich"
PLACEMENTS = (PRE, POST, POST_IN_RESIDUAL, SANDWICH)
MIXED = "mixed"      # sublayers (or switched blocks) that disagree: a reading, never a choice
NO_NORM = "none"     # residual sublayers without norms: a reading, never a choice
PLACEMENT_LABELS = {PRE: "Pre", POST: "Post", POST_IN_RESIDUAL: "In res", SANDWICH: "Both"}
PLACEMENT_NAMES = {PRE: "pre-norm", POST: "post-norm",
                   POST_IN_RESIDUAL: "post-norm in the residual", SANDWICH: "sandwich norm",
                   MIXED: "mixed norms", NO_NORM: "no norm"}

# ----------------------------------------------------------------------- activation
RELU, GELU, GELU_TANH, SILU = "relu", "gelu", "gelu_tanh", "silu"
GLU, GEGLU, SWIGLU = "glu", "geglu", "swiglu"
ACTIVATIONS = (RELU, GELU, GELU_TANH, SILU, GLU, GEGLU, SWIGLU)  # an FFN's parameter choices
GATED = (GLU, GEGLU, SWIGLU)  # three matrices (gate, up, down) where a plain FFN has two
# the activation switch's families: GELU_TANH is a GELU (activation_family)
ACTIVATION_FAMILIES = (RELU, GELU, SILU, GLU, GEGLU, SWIGLU)
ACTIVATION_LABELS = {RELU: "ReLU", GELU: "GELU", GELU_TANH: "GELU", SILU: "SiLU", GLU: "GLU",
                     GEGLU: "GEGLU", SWIGLU: "SwiGLU"}

# ----------------------------------------------------------------------- norm kind
LAYERNORM, RMSNORM = "layernorm", "rmsnorm"
NORM_KINDS = (LAYERNORM, RMSNORM)
NORM_KIND_LABELS = {LAYERNORM: "LayerNorm", RMSNORM: "RMSNorm"}

# ----------------------------------------------------------------------- positional scheme
SINUSOIDAL, LEARNED, ROPE, ALIBI, NO_POSITIONS = "sinusoidal", "learned", "rope", "alibi", "none"
POSITIONAL_SCHEMES = (SINUSOIDAL, LEARNED, ROPE, ALIBI, NO_POSITIONS)
ABSOLUTE_SCHEMES = (SINUSOIDAL, LEARNED)   # a positional-encoding block adds them to the stream
IN_ATTENTION_SCHEMES = (ROPE, ALIBI)       # self-attention applies them to its scores or q/k
POSITIONAL_SCHEME_LABELS = {SINUSOIDAL: "Sinusoidal", LEARNED: "Learned", ROPE: "RoPE",
                            ALIBI: "ALiBi", NO_POSITIONS: "None"}

# ----------------------------------------------------------------------- FFN kind
# the FFN switch's own words (not block type names): a dense FFN or a mixture of experts
DENSE_FFN, MOE_FFN = "ffn", "moe"
FFN_KINDS = (DENSE_FFN, MOE_FFN)
FFN_KIND_LABELS = {DENSE_FFN: "FFN", MOE_FFN: "MoE"}

__all__ = [n for n in dir() if n.isupper()]
