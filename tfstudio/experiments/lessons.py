"""Three built-in lessons: ready-made comparisons that each run on a CPU in a few minutes and
end on a page with a plot and two sentences on what it shows, written from the measured numbers.

    positions  learned / sinusoidal / RoPE / ALiBi trained at 64 tokens, evaluated to 256
    attention  MHA / GQA / MQA: the KV cache shrinks 4:2:1 at a small cost in loss
    norm       pre- vs post-norm at a high learning rate, with per-layer gradient norms
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from ..runs import TrainConfig
from .results import Comparison

# the measured setting: char tokens of the stories sample, 400 steps of 16 x 64, lr 3e-3
LESSON_TRAINING = dict(corpus="sample", tokenizer="char", steps=400, batch_size=16, seq_len=64,
                       lr=3e-3, eval_every=50)


@dataclass
class Lesson:
    name: str
    title: str
    base: str
    varies: list[tuple[str, list[str]]]
    training: dict
    summarise: Callable[[Comparison], list[str]]
    base_edits: list[tuple[str, str]] = field(default_factory=list)  # applied to the base first
    eval_lengths: list[int] = field(default_factory=list)
    grad_norms: bool = False

    def config(self, seed: int = TrainConfig.seed) -> TrainConfig:
        return TrainConfig(**{**self.training, "seed": seed})


def _by_name(c: Comparison, prefix: str) -> dict:
    return {v.name.split("=", 1)[1]: v for v in c.variants if v.name.startswith(prefix)}


def position_buckets(c: Comparison) -> dict[str, list[float | None]]:
    """{scheme: mean loss per bucket}, from the comparison's length evaluation."""
    return {scheme: v.mean_lengths().buckets for scheme, v in _by_name(c, "positions=").items()
            if v.mean_lengths() is not None}


def _positions_summary(c: Comparison) -> list[str]:
    b = position_buckets(c)
    if not {"alibi", "learned", "rope"} <= set(b):
        return ["Loss against position for each scheme, trained on 64 tokens."]
    ratio = lambda scheme, i: b[scheme][i] / b[scheme][0]  # noqa: E731
    return [
        f"Trained on {c.plan.config.seq_len} tokens, ALiBi keeps its loss past the training "
        f"length (x{ratio('alibi', 3):.2f} at positions 192-255), while learned positions jump "
        f"at once (x{ratio('learned', 1):.2f} at 64-127: rows past 64 were never trained).",
        f"RoPE degrades step by step rather than falling off a cliff (x{ratio('rope', 1):.2f} "
        f"at 64-127, x{ratio('rope', 2):.2f} at 128-191, x{ratio('rope', 3):.2f} at 192-255): "
        "it has never seen rotations that large, and extrapolating needs scaling or ALiBi.",
    ]


def _attention_summary(c: Comparison) -> list[str]:
    v = _by_name(c, "attention=")
    if not {"mha", "gqa", "mqa"} <= set(v):
        return ["KV cache and loss of each attention kind."]
    kv = {k: x.runs[0].inference.kv_bytes_measured for k, x in v.items() if x.runs[0].inference}
    loss = {k: x.val_loss for k, x in v.items()}
    params = {k: x.params for k, x in v.items()}
    cost = ("costs a little quality at this size" if loss["mqa"] > loss["mha"] else
            "costs no quality here")
    return [
        f"Sharing keys and values across query heads shrinks the KV cache "
        f"{kv['mha'] // kv['mqa']}:{kv['gqa'] // kv['mqa']}:1 (MHA:GQA:MQA, measured on the "
        f"cache tensors) and the parameters with it ({params['mha']:,} / {params['gqa']:,} / "
        f"{params['mqa']:,}).",
        f"Validation loss {loss['mha']:.3f} (MHA), {loss['gqa']:.3f} (GQA), {loss['mqa']:.3f} "
        f"(MQA): fewer K/V heads {cost}, which is why large models serving long contexts "
        "choose GQA, the middle ground.",
    ]


def _layer_spread(variant) -> float:
    """Largest over smallest gradient norm among the layers at the last logged step."""
    norms = variant.runs[0].layer_grad_norms
    last = [series[-1][1] for layer, series in norms.items()
            if layer.startswith("layers.") and series]
    return max(last) / max(min(last), 1e-12) if last else float("nan")


def _factor(x: float) -> str:
    return f"x{x:.1f}" if x < 100 else f"about 10^{math.log10(x):.0f}"


def _norm_summary(c: Comparison) -> list[str]:
    v = _by_name(c, "norm=")
    if not {"pre", "post"} <= set(v):
        return ["Pre- and post-norm at a high learning rate."]
    pre, post = v["pre"], v["post"]
    unigram = c.baselines.get("unigram")
    stalls = (f" (counting single characters gives {unigram:.3f})" if unigram else "")
    return [
        f"At lr {c.plan.config.lr:g}, pre-norm trains to a validation loss of "
        f"{pre.val_loss:.3f} while post-norm ends at {post.val_loss:.3f}{stalls}.",
        f"The per-layer gradient norms show why: in post-norm every gradient passes through "
        f"each layer's norm on its way down and the layers' gradients end "
        f"{_factor(_layer_spread(post))} apart, while pre-norm's residual stream carries the "
        f"gradient to every layer unchanged ({_factor(_layer_spread(pre))} apart).",
    ]


LESSONS = {
    "positions": Lesson(
        "positions", "Lesson: positions and length extrapolation", "tiny-gpt",
        [("positions", ["learned", "sinusoidal", "rope", "alibi"])], LESSON_TRAINING,
        _positions_summary, eval_lengths=[64, 128, 192, 256]),
    "attention": Lesson(
        "attention", "Lesson: multi-head, grouped-query and multi-query attention", "tiny-gpt",
        [("attention", ["mha", "gqa", "mqa"])], LESSON_TRAINING, _attention_summary),
    "norm": Lesson(
        "norm", "Lesson: pre-norm against post-norm", "tiny-gpt",
        [("norm", ["pre", "post"])], {**LESSON_TRAINING, "lr": 1e-2, "warmup_steps": 10},
        _norm_summary, base_edits=[("layers.repeat", "4")], grad_norms=True),
}
