"""What the Explain view shows, computed as plain data off the GUI thread: the walk, the logit lens,
the ablation's effect and the embedding map of one text (:func:`compute_explanation`)."""
from __future__ import annotations

from pathlib import Path

from .explain_ablation import chosen_span
from .explain_embeddings import embedding_read_out


def compute_explanation(model, tokenizer, text: str, position: int, head: int,
                        layer: int | None, sampling: tuple[float, int, float],
                        ablate: list[str], span: tuple[str, int, int] = ("answer", 1, 1)
                        ) -> dict:
    """Everything the view shows, as plain data (runs on the worker thread); ``span``: which
    tokens an ablation is also scored on (:func:`~.explain_ablation.chosen_span`)."""
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
