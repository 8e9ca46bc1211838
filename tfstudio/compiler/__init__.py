"""Graph -> torch.nn.Module, through generated static Python source.

``compile_graph(graph, *, validate=True) -> model`` returns an instance of a generated subclass
of :class:`tfstudio.nn.GraphModel`. Its interface (the trainer, probes, GUI and exports rely on
it):

- ``model.family``: "decoder" | "encoder" | "encoder-decoder" (from the token inputs' roles and
  the head type); ``model.input_roles``: ["tokens"] or ["source", "target"];
  ``model.head_type``: "lm_head" | "mlm_head" | "seq2seq_head"; ``model.vocab_size``;
  ``model.graph`` (a copy of the compiled graph); ``model.source`` (the generated code).
- decoder / encoder: ``model(ids) -> logits [B, T, V]``; encoder-decoder:
  ``model(src_ids, tgt_ids) -> logits [B, T_tgt, V]``.
- incremental decoding: ``cache = model.new_cache()``, then ``model(ids_chunk, cache=cache)``
  (or ``model(src_ids, tgt_chunk, cache=cache)``: the encoder runs on the first call only) returns
  the logits of the new positions, equal to the full forward's. ``cache.offset`` counts the
  positions seen. Encoders (bidirectional attention) refuse ``new_cache()``.
- ``model.aux_loss()``: sum of the MoE load-balancing losses of the last forward (0 if none).
- ``model.blocks()``: (path_key, module) per node instance, e.g. ("embed",), ("layers", 0) (a
  group copy), ("layers", 0, "attn"); ``model.attention_modules()``: the attention subset,
  whose weights [B, H, Tq, Tk] a probe reads at each one's "weights" hook point
  (``tfstudio.nn.hooks``).
- weight tying: a tied head's ``proj.weight`` IS the embedding's ``weight`` Parameter (the
  embedding feeding the head's stream; for an encoder-decoder the target embedding).
- init: normal(0, 0.02) Linear/Embedding weights, zero biases, unit norms; residual output
  projections normal(0, 0.02 / sqrt(number of residual branches)).
- a graph the validator (``tfstudio.graph.validate``) finds errors in, or one the compiler
  cannot build, raises :class:`CompileError` naming the node and the fix.

State-dict names follow attribute names: node ids (de-collided from Python/nn.Module names),
``layers.<i>.<node id>`` inside a repeated group; see ``tfstudio.nn`` for each module's weights.
Modules are created on the current default device (``with torch.device("meta"):`` builds
without memory). A compiled model is saved as a state_dict (its class is generated, so pickling
the module itself is not supported); :func:`standalone_source` writes a self-contained file.
"""
from .build import compile_graph
from .errors import CompileError
from .standalone import standalone_source

__all__ = ["compile_graph", "CompileError", "standalone_source"]
