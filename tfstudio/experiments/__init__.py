"""Controlled experiments: train architecture variants side by side and measure them.

``variants`` turns ``--vary KEY=v1,v2`` into graphs with the editor's own switches, ``runner``
trains each as an ordinary run folder, ``lengths`` measures loss per position (length
extrapolation), ``baselines`` counts n-gram models on the same tokens, ``inference`` measures
generation speed and the KV cache, ``scaling`` stretches RoPE to longer contexts, ``report``
writes the comparison as Markdown and HTML, ``compare`` runs one comparison from plan to page,
and ``lessons`` are registered claims, each checked against its comparison with a computed
verdict.
Sits above the trainer (it trains) and below the GUI and the command line (which show it).
"""
