"""The names of the built-in block types, one constant each.

Each type is defined, in full, by its module in ``tfstudio.blocks`` (which registers it under
this name); code that builds or reads particular architectures (templates, switches, the
compiler's model plan, Hugging Face export) refers to a type through these constants rather
than spelling the string, so a rename is one edit and a typo an ImportError.
"""
TOKEN_INPUT = "token_input"
TOKEN_EMBEDDING = "token_embedding"
POSITIONAL_ENCODING = "positional_encoding"
ATTENTION = "attention"
CROSS_ATTENTION = "cross_attention"
FEED_FORWARD = "feed_forward"
MOE = "moe"
NORM = "norm"
ADD = "add"
DROPOUT = "dropout"
RNN = "rnn"
FIXED_WINDOW = "fixed_window"
LM_HEAD = "lm_head"
MLM_HEAD = "mlm_head"
SEQ2SEQ_HEAD = "seq2seq_head"

HEAD_TYPES = (LM_HEAD, MLM_HEAD, SEQ2SEQ_HEAD)
ATTENTION_TYPES = (ATTENTION, CROSS_ATTENTION)  # blocks with heads and K/V heads
FFN_TYPES = (FEED_FORWARD, MOE)                 # blocks with d_ff and an activation
