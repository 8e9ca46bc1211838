"""Starting a run from another run's weights (``--init-from``), fitted to this run's vocabulary.

An imported checkpoint's embedding and head have the model's own vocabulary (a GPT-2 with 401
ids), while the run's tokenizer adds tfstudio's special tokens (404 ids). Those tables are
widened: every old row keeps its id, and each new row starts as the mean of the old rows (a
token the model has never seen starts as the average token rather than as noise, so the first
loss is not thrown off). Narrowing drops rows only where no token of the source's tokenizer
lives (a vocabulary padded past its tokenizer); otherwise it is refused, since ids would be lost.
"""
from __future__ import annotations

import torch
from safetensors.torch import load_file

from ..graph import Graph
from ..graph import block_types as bt
from ..runs.checkpoint import is_tied_alias
from ..runs.folder import RunFolder
from .start import RunRefused


def load_weights_from(folder: RunFolder, model: torch.nn.Module, vocab_size: int) -> list[str]:
    """Copy ``folder``'s newest intact weights into ``model`` (whose tables have
    ``vocab_size`` rows); returns one note per table widened or narrowed."""
    if folder.checkpoint().path is None:
        raise RunRefused(f"--init-from {folder.path}: no checkpoint there to start from")
    # held from rotation: the run started from may still be training
    _, tensors = folder.read_newest(lambda path: load_file(str(path / "model.safetensors")))
    source_vocab = _vocab_of(folder.graph())
    target = model.state_dict()
    notes = []
    for name, tensor in tensors.items():
        want = target.get(name)
        if want is None or want.shape == tensor.shape:
            continue
        if (source_vocab is None or tensor.shape[0] != source_vocab
                or want.shape[0] != vocab_size or tensor.shape[1:] != want.shape[1:]):
            continue  # not a vocabulary table: reported as a misfit below
        if vocab_size < source_vocab:
            _check_narrowing(folder, source_vocab, vocab_size)
        tensors[name] = resize_rows(tensor, vocab_size)
        how = "widened" if vocab_size > source_vocab else "narrowed"
        notes.append(f"--init-from {folder.path}: {name} {how} from {source_vocab} to "
                     f"{vocab_size} rows for this run's tokenizer"
                     + (" (new rows start as the mean of the old)" if how == "widened" else ""))
    try:
        missing, unexpected = model.load_state_dict(tensors, strict=False)
    except RuntimeError as exc:
        first = str(exc).splitlines()[-1].strip()
        raise RunRefused(f"--init-from {folder.path}: its weights do not fit this graph "
                         f"({first}); train {folder.graph_path} itself, with the run's "
                         "tokenizer") from None
    missing = [k for k in missing if not is_tied_alias(model, k)]
    if missing or unexpected:
        raise RunRefused(f"--init-from {folder.path}: its weights do not fit this graph "
                         f"(missing {sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]}); "
                         f"train {folder.graph_path} itself, with the run's tokenizer")
    return notes


def resize_rows(table: torch.Tensor, rows: int) -> torch.Tensor:
    """``table`` with ``rows`` rows: the first ones kept, new ones the mean of the old."""
    if rows <= table.shape[0]:
        return table[:rows].clone()
    fill = table.float().mean(dim=0, keepdim=True).to(table.dtype)
    return torch.cat([table, fill.expand(rows - table.shape[0], *table.shape[1:])], dim=0)


def _check_narrowing(folder: RunFolder, source_vocab: int, vocab_size: int) -> None:
    used = folder.tokenizer().vocab_size if folder.tokenizer_path.exists() else source_vocab
    if used > vocab_size:
        raise RunRefused(
            f"--init-from {folder.path}: its embedding has {source_vocab} rows and its tokens "
            f"go up to id {used - 1}, but this run's tokenizer has {vocab_size} ids, so ids "
            f"{vocab_size}..{used - 1} would be lost; train with {folder.path}'s own tokenizer "
            "(leave --tokenizer out)")


def _vocab_of(graph: Graph) -> int | None:
    for _, node in graph.walk():
        if node.type == bt.TOKEN_EMBEDDING:
            return int(node.typed_params().vocab_size)
    return None
