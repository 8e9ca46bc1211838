"""What a command that trains or reads a run imports, imported in one go without the cyclic
garbage collector.

torch, ``torch._dynamo`` (AdamW's constructor imports it) and sympy leave about 460,000 objects
the collector tracks. Imported with the collector on, every 700 allocations start a collection,
and each full one scans everything imported so far; afterwards, each full collection of the run
scans them all again. Imported here, then frozen (``gc.freeze``: the collector leaves them be),
a one-step ``tfstudio train`` takes 2.06 CPU-s instead of 3.10 (``bench/bench_run_startup.py``,
2 cores). Only a process of its own freezes: what exists when it freezes is never collected,
which suits a command's modules, graph and corpus, not a long-lived app's windows.
"""
from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Iterable

# what every run imports: the trainer imports the compiler, the pipeline and the probes lazily,
# and AdamW's constructor imports torch._dynamo (1.5 CPU-s of the total)
TRAINING = ("tfstudio.train.trainer", "tfstudio.train.pipeline", "tfstudio.compiler", "tfstudio.nn",
            "tfstudio.probes", "tfstudio.graph.cost", "tfstudio.data.simple_tokenizers",
            "torch._dynamo")
# what a command that reads a run (generate, eval, explain, export, import-hf) imports: torch is
# nearly all of it (`tfstudio generate` of 8 tokens: 1.65 CPU-s, 1.18 frozen; the same bench)
READING = ("torch", "tfstudio.nn")


def import_frozen(modules: Iterable[str]) -> None:
    """Import ``modules`` with the cyclic collector off, then freeze every object this process
    holds, so no collection scans them again. A process that has imported them all already
    (a test worker calling a command in process) is left as it is: freezing there would keep
    whatever it holds for good. The cyclic garbage the imports leave (about 8,700 objects,
    7 MB) is frozen with the rest: collecting it first would cost 0.23 CPU-s."""
    modules = list(modules)
    if all(name in sys.modules for name in modules):
        return
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for name in modules:
            importlib.import_module(name)
    finally:
        if was_enabled:
            gc.enable()
    gc.freeze()
