"""Export to a Hugging Face folder: ``config.json`` + ``model.safetensors`` (+ tokenizer) that
``transformers.AutoModelForCausalLM`` (``AutoModelForMaskedLM`` for BERT) loads offline.

Needs neither transformers nor a network: the config is written as JSON and the tensors are
laid out the way the stock checkpoints on the Hub are (Mixtral's experts as
``block_sparse_moe.experts.N.w1/w2/w3``, GPT-2's matrices as Conv1D transposes).
"""
from __future__ import annotations

import json
from pathlib import Path

from .anatomy import read_anatomy
from .errors import ExportRefused
from .families import FAMILIES, approximations, check, choose_family, export_config
from .report import Report
from .source import resolve_source
from .staging import write_staged
from .weights import export_tensors, family_links

DEFAULT_CONTEXT = 2048


def hf_plan(graph):
    """(family name, anatomy) for a graph that maps onto a stock architecture, else raise
    :class:`ExportRefused` naming the nodes in the way."""
    anatomy = read_anatomy(graph, "a Hugging Face model")
    family = choose_family(anatomy)
    problems = check(family, anatomy)
    if problems:
        raise ExportRefused(f"Hugging Face {FAMILIES[family].architecture} (the closest stock "
                            "architecture)", problems)
    return family, anatomy


def export_hf(source, out_dir, *, state_dict: dict | None = None, tokenizer=None,
              overwrite: bool = False) -> Report:
    """Write ``source`` (a run folder, compiled model, Graph, preset name or graph .json;
    ``state_dict`` replaces its weights) as a Hugging Face model folder."""
    src = resolve_source(source, state_dict, tokenizer)
    family, anatomy = hf_plan(src.graph)
    config = export_config(family, anatomy, _context(src))
    tensors = export_tensors(family_links(family, anatomy, dict(src.model.blocks())))
    report = write_staged(out_dir, overwrite, "export",
                          lambda staging, out: _write_hf(src, family, anatomy, config, tensors,
                                                         staging, out))
    report.out_dir = Path(out_dir)
    return report


def _write_hf(src, family: str, anatomy, config: dict, tensors: dict, out: Path,
              shown: Path) -> Report:
    """The Hugging Face folder's files in ``out`` (to be moved to ``shown``)."""
    from safetensors.torch import save_file

    report = Report("export hf", shown, FAMILIES[family].architecture)
    report.done.append(f"weights: {len(tensors)} tensors, "
                       f"{sum(t.numel() for t in tensors.values()):,} values, float32"
                       + ("" if src.trained else " (freshly initialised: the source had no "
                                                 "trained weights)"))
    if src.tokenizer is not None:
        from .hf_tokenizer import export_files
        _special_ids(config, src.tokenizer)
        files, note = export_files(src.tokenizer, out, _context(src))
        report.files += files
        report.done.append(note)
    else:
        report.left_out.append("tokenizer: the source has none (export a run folder to carry "
                               "its tokenizer)")
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    report.files[:0] = ["config.json", "model.safetensors"]
    report.done.append(f"loads with transformers.{FAMILIES[family].auto_class}"
                       f".from_pretrained('{shown}')")
    report.left_out += ["training state (optimizer moments, step, metrics)",
                        "the graph's layout (node positions, titles)"]
    report.approximations += approximations(family, anatomy)
    return report


def _context(src) -> int:
    return int(src.graph.meta.get("context_length") or DEFAULT_CONTEXT)


def _special_ids(config: dict, tokenizer) -> None:
    """eos/pad ids for the config, when the model's vocabulary has them."""
    vocab = config["vocab_size"]
    for key, name in (("eos_token_id", "<|endoftext|>"), ("pad_token_id", "<|pad|>")):
        token_id = tokenizer.specials.get(name)
        if token_id is not None and token_id < vocab:
            config[key] = token_id
