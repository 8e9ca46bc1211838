"""Import a local Hugging Face checkpoint folder as a tfstudio run folder.

Reads ``config.json`` and the weights (``model.safetensors``, sharded safetensors, or
``pytorch_model.bin`` loaded with ``weights_only=True``) directly: transformers is not needed
and nothing touches the network. The architecture becomes a graph built with
:func:`tfstudio.graph.templates.transformer_lm`, the weights go through the same link table the
exporter uses, and the result is written as a run folder (graph.json, config.json,
tokenizer.json when the tokenizer can be represented, checkpoints/step-00000000) that every view,
``tfstudio generate`` and the exporters open like a trained run.

``tokenizer="byte"`` (or ``"tiktoken:NAME"``) gives the run that tokenizer instead: the
embedding and head keep, for each of its ids, the checkpoint's row for the same token (GPT-2's
byte tokens sit in ``bytes_to_unicode`` order, not byte order), so the model still reads text.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..graph import block_types as bt
from .errors import InteropError
from .folder_files import inside
from .families import FAMILIES, HFConfig, graph_from_config
from .report import Report
from .staging import write_staged
from .weights import BERT_TYPE_VOCAB, family_links, load_tensors

# tensors a checkpoint may carry that hold no model weight, or belong to parts (BERT's pooler
# and next-sentence head) that a masked-LM import leaves behind
_IGNORED = re.compile(r"(^|\.)(position_ids|masked_bias|rotary_emb\.inv_freq)$|"
                      r"\.attn\.bias$|^bert\.pooler\.|^cls\.seq_relationship\.")


def import_hf(folder, out_dir, *, overwrite: bool = False, tokenizer: str | None = None,
              memory_check: bool = True) -> Report:
    """Turn the Hugging Face checkpoint in ``folder`` into a tfstudio run folder ``out_dir``;
    ``tokenizer`` (a spec such as "byte") replaces the folder's own tokenizer. ``memory_check``
    first refuses a checkpoint whose weights (twice: the file's and the model's) would not fit
    in memory."""
    from ..runs.preflight import NO_CHECK_HINT, check_model_memory
    from .hf_tokenizer import import_tokenizer, tokenizer_for_import

    spec = tokenizer
    chosen = tokenizer_for_import(spec) if spec else None  # checked before any work is done
    folder = Path(folder)
    cfg = read_config(folder)
    graph, notes = graph_from_config(cfg, folder.resolve().name or "imported")
    if memory_check:
        check_model_memory(graph, copies=2, what=f"importing {folder}", hint=NO_CHECK_HINT)
    model, tensors, used = _load_weights(graph, cfg, folder)
    if chosen is None:
        tokenizer, tokenizer_note = import_tokenizer(folder)
    else:
        graph, model, tokenizer_note = _refit_vocabulary(graph, model, chosen, folder, cfg, spec)
        tokenizer = chosen
    out = Path(out_dir)
    if overwrite and out.is_dir() and any(out.iterdir()):
        files = _replace_run(out, graph, model, tokenizer, folder)
    else:
        files = write_staged(out, overwrite, "import", lambda staging, _: _write_run(
            staging, graph, model, tokenizer, folder))
    report = Report("import-hf", out, FAMILIES[cfg.model_type].architecture, files)
    n_params = sum(p.numel() for p in model.parameters())
    report.done.append(f"weights: {len(used)} tensors into {n_params:,} parameters (float32)")
    (report.done if tokenizer is not None else report.left_out).append(tokenizer_note)
    report.approximations += notes
    _note_left_behind(report, graph, tensors, tokenizer)
    return report


def _load_weights(graph, cfg: HFConfig, folder: Path):
    """(the compiled model with the checkpoint's weights, the checkpoint's tensors, the names
    used); a tensor the family's mapping does not know is refused."""
    from ..compiler import compile_graph
    from .anatomy import read_anatomy

    family = cfg.model_type
    model = compile_graph(graph)
    links = family_links(family, read_anatomy(graph), dict(model.blocks()))
    tensors = normalise_names(family, read_weights(folder), cfg)
    used = load_tensors(links, tensors, str(folder))
    leftover = sorted(k for k in tensors if k not in used and not _IGNORED.search(k)
                      and not _tied_copy(k, tensors, cfg))
    if leftover:
        raise InteropError(f"{folder}: the checkpoint has tensors this {family} import does not "
                           f"know ({', '.join(leftover[:5])}{', ...' if len(leftover) > 5 else ''})"
                           "; it is not a plain " + FAMILIES[family].architecture)
    return model, tensors, used


def _replace_run(out: Path, graph, model, tokenizer, folder: Path) -> list[str]:
    """--force into a folder that holds files: the new run is written into a folder next to
    it first, so a failed write (a full disk) leaves the earlier run as it was; then the
    earlier run's files are swapped for the new ones (other files in it are kept). Refused
    while a training run is writing the folder."""
    import shutil

    from ..runs.disk import disk_line
    from ..runs.folder import RunFolder
    from ..runs.lock import RunLocked

    staging = out.parent / f".{out.name}.import-{os.getpid()}.partial"
    run = RunFolder(out)
    try:
        with run.lock():
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
            files = _write_run(staging, graph, model, tokenizer, folder)
            run.replace_with(staging)
    except RunLocked as exc:
        raise InteropError(str(exc)) from None
    except Exception as exc:
        line = disk_line(exc, out, "while writing the import", "the run already there is as "
                         "it was", "import again")
        if line is None:
            raise
        raise InteropError(line) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return files


def _write_run(out: Path, graph, model, tokenizer, folder: Path) -> list[str]:
    """graph.json, config.json, the tokenizer and a step-0 checkpoint in ``out``; their names."""
    import torch

    from ..graph import save_graph
    from ..runs.checkpoint import save_checkpoint
    from ..runs.config import TrainConfig

    save_graph(graph, out / "graph.json")
    config = TrainConfig(tokenizer=_tokenizer_spec(tokenizer),
                         seq_len=min(TrainConfig.seq_len, int(graph.meta["context_length"])))
    (out / "config.json").write_text(json.dumps(config.to_dict(), indent=2), encoding="utf-8")
    files = ["graph.json", "config.json"]
    if tokenizer is not None:
        tokenizer.save(out)
        files.append("tokenizer.json")
    model.eval()
    with torch.no_grad():
        setup = {name: out / name for name in ("graph.json", "tokenizer.json")
                 if (out / name).is_file()}  # recorded: a later change is refused on load
        ckpt = save_checkpoint(out / "checkpoints", 0, model, None,
                               {"tokens_seen": 0, "imported_from": str(folder.resolve())},
                               setup=setup)
    files.append(str(ckpt.relative_to(out) / "model.safetensors"))
    return files


def _note_left_behind(report: Report, graph, tensors: dict, tokenizer) -> None:
    """Say what of the checkpoint was left out, and a tokenizer wider than the model."""
    ignored = sorted(k for k in tensors if _IGNORED.search(k))
    if any(k.startswith(("bert.pooler.", "cls.seq_relationship.")) for k in ignored):
        report.left_out.append("BERT's pooler and next-sentence head (not part of a masked LM)")
    if tokenizer is not None and tokenizer.vocab_size > graph_vocab(graph):
        report.approximations.append(
            f"the tokenizer has {tokenizer.vocab_size} ids (tfstudio's specials added) and the "
            f"model {graph_vocab(graph)}; training from this run widens the embedding")


def _refit_vocabulary(graph, model, tokenizer, folder: Path, cfg: HFConfig, spec: str):
    """(graph, model, note) with the embedding and head rebuilt for ``tokenizer``: each id's
    row is the checkpoint's row for the same token, and a special without one starts at the
    mean row (as ``--init-from`` widens)."""
    import copy

    import torch

    from ..compiler import compile_graph
    from .hf_tokenizer import read_vocabulary, rows_for

    old = graph_vocab(graph)
    vocab = read_vocabulary(folder, cfg.model_type, old)
    rows = rows_for(tokenizer, vocab, old, cfg, spec)
    fitted = copy.deepcopy(graph)
    prefixes = []
    for path, node in fitted.walk():
        if "vocab_size" in node.resolved_params():
            node.params["vocab_size"] = tokenizer.vocab_size
            prefixes.append(".".join((*path, node.id)) + ".")
    state = model.state_dict()
    for name, table in state.items():
        if name.startswith(tuple(prefixes)) and table.shape[0] == old:
            mean = table.float().mean(dim=0).to(table.dtype)
            state[name] = torch.stack([mean if r is None else table[r] for r in rows])
    refitted = compile_graph(fitted)
    refitted.load_state_dict(state)
    return fitted, refitted, _refit_note(tokenizer, spec, rows, old, vocab.source)


def _refit_note(tokenizer, spec: str, rows: list[int | None], old: int, source: str) -> str:
    named = ", ".join(f"{n} = row {rows[i]}" for n, i in tokenizer.specials.items()
                      if rows[i] is not None)
    fresh = [n for n, i in tokenizer.specials.items() if rows[i] is None]
    dropped = old - len({r for r in rows if r is not None})
    return (f"tokenizer: {tokenizer.name} (--tokenizer {spec}), {tokenizer.vocab_size} ids; "
            "each id's embedding and head row is the checkpoint's row for the same token "
            f"({source})"
            + (f"; {named}" if named else "")
            + (f"; {', '.join(fresh)} start at the mean row" if fresh else "")
            + (f"; the other {dropped:,} rows are dropped" if dropped else ""))


def graph_vocab(graph) -> int:
    return int(next(n for _, n in graph.walk() if n.type == bt.TOKEN_EMBEDDING)
               .typed_params().vocab_size)


MAX_CONFIG_BYTES = 16 << 20   # a config.json is a few KB; more is not a model's config
MAX_HEADER_BYTES = 100 << 20  # safetensors' own limit on its JSON header


def read_config(folder: Path) -> HFConfig:
    if not folder.is_dir():
        raise InteropError(f"{folder} is not a folder; pass a local Hugging Face checkpoint "
                           "folder (with config.json and model.safetensors)")
    if not os.path.lexists(folder / "config.json"):
        raise InteropError(f"{folder} has no config.json; is it a Hugging Face model folder?")
    path = inside(folder, "config.json")
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise InteropError(f"{path}: {path.stat().st_size:,} bytes is not a model's config "
                           "(they are a few KB); is it the right file?")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InteropError(f"{path}: not valid JSON ({exc})") from None
    except RecursionError:
        raise InteropError(f"{path}: nested too deeply to be a model's config") from None
    except OSError as exc:
        raise InteropError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not isinstance(data, dict):
        raise InteropError(f"{path}: expected a JSON object")
    return HFConfig(data, str(path))


def read_weights(folder: Path) -> dict:
    """Every tensor of the checkpoint by name (safetensors preferred; .bin read with
    ``weights_only=True`` so no code in it runs). Only files inside ``folder`` are read."""
    from safetensors.torch import load_file

    for index_name, loader in (("model.safetensors.index.json", _load_safetensors),
                               ("pytorch_model.bin.index.json", _load_bin)):
        if os.path.lexists(folder / index_name):
            index = inside(folder, index_name)
            tensors = {}
            for shard in shard_paths(folder, index):
                tensors.update(loader(shard))
            return tensors
    if os.path.lexists(folder / "model.safetensors"):
        return _load_safetensors(inside(folder, "model.safetensors"))
    if os.path.lexists(folder / "pytorch_model.bin"):
        return _load_bin(inside(folder, "pytorch_model.bin"))
    raise InteropError(f"{folder} has no weights (model.safetensors, its shards, or "
                       "pytorch_model.bin)")


def shard_paths(folder: Path, index: Path) -> list[Path]:
    """The shard files an index names, each checked to be a file inside ``folder``: a name
    such as ``../outside.bin`` or ``/etc/passwd`` is refused, never opened, and so is a link
    out of the folder (see :func:`inside`)."""
    not_an_index = InteropError(f"{index}: not a shard index (a JSON object whose 'weight_map' "
                                "maps tensor names to shard files); re-save the checkpoint")
    try:
        names = set(json.loads(index.read_text("utf-8"))["weight_map"].values())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError,
            AttributeError):
        raise not_an_index from None
    if not all(isinstance(name, str) and name for name in names):
        raise not_an_index
    paths = []
    for name in sorted(names):
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise InteropError(f"{index}: shard {name!r} is outside {folder}; an index may name "
                               "only files inside the checkpoint folder, so fix the index")
        if not os.path.lexists(folder / name):
            raise InteropError(f"{index}: shard '{name}' is missing from {folder}; copy it "
                               "there or re-download the checkpoint")
        paths.append(inside(folder, name))
    return paths


def _load_safetensors(path: Path) -> dict:
    """The tensors of a safetensors file whose header was checked first: its length must fit
    the file and safetensors' limit, so a header claiming 4e14 or 2^62 bytes is refused
    before anything is read or allocated."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    size = path.stat().st_size
    with open(path, "rb") as f:
        header_len = int.from_bytes(f.read(8), "little")
    if size < 8 or header_len > size - 8 or header_len > MAX_HEADER_BYTES or header_len < 2:
        raise InteropError(f"{path}: not a safetensors file (its header claims {header_len:,} "
                           f"bytes; the file has {size:,}); download it again")
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise InteropError(f"{path}: not a readable safetensors file ({first}); download it "
                           "again") from None


def _load_bin(path: Path) -> dict:
    import torch
    try:
        return torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as exc:  # pickles that need code to load are refused by design
        raise InteropError(f"{path}: cannot be read as plain tensors ({_bin_reason(exc)}); "
                           "tfstudio never runs code from a file: convert it to safetensors "
                           "with the tool that made it") from None


def _bin_reason(exc: Exception) -> str:
    """torch's reason in a few words, without its paragraphs of advice (which include loading
    the file with weights_only=False: running the code in it)."""
    text = str(exc)
    match = re.search(r"Unsupported global: GLOBAL ([\w.]+)", text)
    if match:
        return f"it needs the Python object {match.group(1)}, which means running its code"
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("WeightsUnpickler error:"):
            return line.removeprefix("WeightsUnpickler error:").strip()[:200]
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return first[:200]


def normalise_names(family: str, tensors: dict, cfg: HFConfig) -> dict:
    """Checkpoint names as the link table expects them: the usual prefix, old spellings
    (LayerNorm gamma/beta), transformers 5's fused Mixtral experts split back into w1/w3/w2,
    and BERT's token-type row 0 folded into its position table."""
    import torch

    out = {}
    for name, t in tensors.items():
        name = name.replace("LayerNorm.gamma", "LayerNorm.weight").replace(
            "LayerNorm.beta", "LayerNorm.bias")
        if family == "gpt2" and not name.startswith(("transformer.", "lm_head.")):
            name = "transformer." + name
        if family == "bert" and not name.startswith(("bert.", "cls.")):
            name = "bert." + name
        out[name] = t
    if family == "mixtral":
        out = _split_fused_experts(out, int(cfg.get("intermediate_size")))
    if family == "bert":
        if not cfg.get("tie_word_embeddings"):  # the decoder's own bias is the one applied
            bias = out.get("cls.predictions.decoder.bias", out.get("cls.predictions.bias"))
            if bias is not None:
                out["cls.predictions.bias"] = out["cls.predictions.decoder.bias"] = bias
        types = out.get("bert.embeddings.token_type_embeddings.weight")
        positions = out.get("bert.embeddings.position_embeddings.weight")
        if types is not None and positions is not None:
            out["bert.embeddings.position_embeddings.weight"] = positions.float() + types[0].float()
            d = types.shape[1]
            out["bert.embeddings.token_type_embeddings.weight"] = torch.zeros(BERT_TYPE_VOCAB, d)
    return out


def _split_fused_experts(tensors: dict, d_ff: int) -> dict:
    out = {}
    fused = re.compile(r"^(model\.layers\.\d+)\.mlp\.(experts\.gate_up_proj|experts\.down_proj|"
                       r"gate\.weight)$")
    for name, t in tensors.items():
        m = fused.match(name)
        if not m:
            out[name] = t
            continue
        layer, what = m.groups()
        moe = f"{layer}.block_sparse_moe"
        if what == "gate.weight":
            out[f"{moe}.gate.weight"] = t
            continue
        for e in range(t.shape[0]):
            if what == "experts.gate_up_proj":
                out[f"{moe}.experts.{e}.w1.weight"] = t[e, :d_ff]
                out[f"{moe}.experts.{e}.w3.weight"] = t[e, d_ff:]
            else:
                out[f"{moe}.experts.{e}.w2.weight"] = t[e]
    return out


def _tied_copy(name: str, tensors: dict, cfg: HFConfig) -> bool:
    """A tied head saved anyway (some checkpoints keep lm_head.weight / decoder weights)."""
    if name == "cls.predictions.decoder.bias":  # an alias of cls.predictions.bias
        return "cls.predictions.bias" in tensors
    if not cfg.get("tie_word_embeddings"):
        return False
    embed = {"lm_head.weight": ("transformer.wte.weight", "model.embed_tokens.weight"),
             "cls.predictions.decoder.weight": ("bert.embeddings.word_embeddings.weight",)}
    for source in embed.get(name, ()):
        if source in tensors and tensors[source].shape == tensors[name].shape:
            return bool((tensors[source] == tensors[name]).all())
    return False


def _tokenizer_spec(tokenizer) -> str:
    """The TrainConfig spelling of the tokenizer, when it is one tfstudio can rebuild by name."""
    if tokenizer is None:
        return "none"
    state = tokenizer.to_dict()
    if tokenizer.kind == "tiktoken":
        return f"tiktoken:{state['encoding']}"
    return tokenizer.kind if tokenizer.kind in ("byte", "char") else tokenizer.name
