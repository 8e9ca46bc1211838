"""Models in and out of tfstudio: Hugging Face folders (both ways), a standalone PyTorch file,
and ONNX.

    export_hf(source, out_dir)        config.json + model.safetensors (+ tokenizer) for
                                      transformers' Auto classes: GPT-2, LLaMA, Mistral,
                                      Mixtral, BERT; refuses other graphs naming the nodes
    import_hf(hf_folder, run_dir)     a local HF checkpoint (those families and Qwen2) as a
                                      tfstudio run folder
    export_pytorch(source, out_dir)   model.py + model.safetensors, needing only torch
    export_onnx(source, out_dir)      model.onnx, checked with onnx.checker
    hf_plan(graph)                    (family, anatomy) or ExportRefused, without exporting

``source`` is a run folder, a compiled model, a Graph, a preset name or a graph .json;
``state_dict=`` replaces its weights. Each returns a :class:`Report` of what was written and
what was not. Nothing here imports torch until one of them is called.

Modules: anatomy (graph -> standard stack), families (HF architectures and configs), weights
(tensor links, both directions), hf_export, hf_import, hf_tokenizer, standalone, onnx_export,
source, report, errors. The ``export`` and ``import-hf`` commands live in :mod:`tfstudio.cli`.
"""
from __future__ import annotations

import importlib

from .errors import ExportRefused, InteropError, Problem
from .report import Report

_LAZY = {"export_hf": "hf_export", "hf_plan": "hf_export", "import_hf": "hf_import",
         "export_pytorch": "standalone", "export_onnx": "onnx_export"}

__all__ = ["ExportRefused", "InteropError", "Problem", "Report", "export_hf", "hf_plan",
           "import_hf", "export_pytorch", "export_onnx"]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
