"""What the Explain view shows, computed as plain data off the GUI thread: the walk, the logit lens,
the ablation's effect and the embedding map of one text (:func:`compute_explanation`)."""
from __future__ import annotations

from pathlib import Path

from .explain_lines import chosen_span


def compute_explanation(model, tokenizer, text: str, position: int, head: int,
                        layer: int | None, sampling: tuple[float, int, float],
                        ablate: list[str], span: tuple[str, int, int] = ("answer", 1, 1)
                        ) -> dict:
    """Everything the view shows, as plain data (runs on the worker thread); ``span``: which
    tokens an ablation is also scored on (:func:`~.explain_lines.chosen_span`)."""
    from ... import probes

    inputs = probes.probe_inputs(model, tokenizer, text)
    temperature, top_k, top_p = sampling
    walk = probes.forward_walk(model, inputs, position=position, head=head, layer=layer,
                               temperature=temperature, top_k=top_k, top_p=top_p)
    lens = probes.logit_lens(model, inputs, tokenizer)
    scored, label, note = chosen_span(span[0], inputs.tokens[inputs.stream_role], *span[1:])
    effect = (probes.ablation_effect(model, inputs, ablate, tokenizer, walk.position,
                                     span=scored, span_label=label) if ablate else None)
    return {"text": text, "walk": walk, "lens": lens, "ablation": effect, "span_note": note,
            "targets": ablation_targets(model),
            "embeddings": embedding_read_out(model, tokenizer, text)}


WHOLE_TABLE = 128     # vocabularies up to this size are mapped whole, larger ones by the text


def mapped_ids(model, tokenizer, text: str) -> list[int]:
    """The tokens the embedding map shows: the whole table when it is small, else the text's."""
    vocab = int(getattr(model, "vocab_size", 0) or 0)
    return list(range(vocab)) if 0 < vocab <= WHOLE_TABLE else tokenizer.encode(text)


def embedding_read_out(model, tokenizer, text: str) -> dict | None:
    """The 2D map of the token embedding table (see :func:`mapped_ids`), with under "angles"
    how the same tokens' vectors sit against the position vectors the model adds
    (:func:`tfstudio.probes.position_angles`: None when it adds none); None for a model
    without a table."""
    from ... import probes

    ids = mapped_ids(model, tokenizer, text)
    try:
        read_out = probes.embedding_map(model, ids, tokenizer)
    except (ValueError, LookupError):  # fewer than 2 tokens, or no embedding table
        return None
    read_out["angles"] = probes.position_angles(model, ids)
    return read_out


def run_probe_text(run_dir: str | Path) -> str:
    """A text to start a run's walk on: its own probe text, else an example of its task or
    the opening of its corpus."""
    from ...data import load_corpus
    from ...probes import default_probe_text
    from ...runs.folder import RunFolder

    try:
        config = RunFolder(run_dir).config()
        return config.probe_text or default_probe_text(load_corpus(config.corpus))
    except (OSError, ValueError):  # a corpus that moved: the fallback text still walks
        return default_probe_text()


def ablation_targets(model) -> list[str]:
    """Every switch the model offers: each sublayer, each head, each expert."""
    from ...nn import CrossAttention, MixtureOfExperts, SelfAttention
    from ...probes._util import key_name

    out = []
    for key, module in model.blocks():
        if not getattr(module, "residual_branch", False):
            continue
        name = key_name(key)
        out.append(name)
        if isinstance(module, (SelfAttention, CrossAttention)):
            out += [f"{name}:head={h}" for h in range(module.heads)]
        if isinstance(module, MixtureOfExperts):
            out += [f"{name}:expert={e}" for e in range(module.num_experts)]
    return out
