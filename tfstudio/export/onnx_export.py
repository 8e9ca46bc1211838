"""Export to ONNX with PyTorch's TorchScript-based exporter (the dynamo exporter needs
onnxscript, which tfstudio does not depend on), then run ``onnx.checker`` on the file.

The graph is traced once, so anything decided in Python during that run is frozen into the
file. Three tfstudio fast paths are swapped for equal, trace-friendly forms while exporting:
attention takes its explicit path (the one probes use, tested equal to the fused kernel), RoPE
turns feature pairs with cos and sin instead of a complex multiply (ONNX has no complex numbers),
and a mixture of experts runs every expert on every token, weighted by the router's top-k
weights (zero for experts not chosen), instead of skipping experts no token chose in the
example. The example sequence is longer than every sliding window,
so window masks are traced rather than skipped. Batch and length stay dynamic.
"""
from __future__ import annotations

import contextlib
import types
import warnings
from pathlib import Path

from ..graph.kinds import LEARNED, ROPE
from .errors import InteropError
from .report import Report
from .source import resolve_source
from .staging import write_staged

OPSET = 18


def export_onnx(source, out_dir, *, state_dict: dict | None = None, overwrite: bool = False,
                opset: int = OPSET) -> Report:
    """Write ``model.onnx`` (inputs ``ids`` [batch, length] int64, output ``logits``)."""
    src = resolve_source(source, state_dict)
    model = src.model
    if model.family == "encoder-decoder":
        raise InteropError("ONNX export takes decoder-only (and encoder-only) graphs; an "
                           "encoder-decoder needs two inputs and a decoding loop; export it "
                           "with --format pytorch")
    write_staged(out_dir, overwrite, "export", lambda staging, out: _write_onnx(
        model, staging / "model.onnx", opset))
    report = Report("export onnx", Path(out_dir), None, ["model.onnx"])
    report.done.append(f"{model.family} model, opset {opset}, inputs ids [batch, length] -> "
                       f"logits [batch, length, {model.vocab_size}]; passes onnx.checker")
    report.left_out += ["the decoding cache (each call reads the whole sequence)",
                        "the tokenizer"]
    if not src.trained:
        report.done.append("weights are freshly initialised (the source had no trained ones)")
    return report


def _write_onnx(model, path: Path, opset: int) -> None:
    """Trace ``model`` into the ONNX file ``path`` and check it."""
    import onnx
    import torch

    from ..runs.disk import disk_refusal

    length = example_length(model)
    ids = torch.randint(0, model.vocab_size, (2, length),
                        generator=torch.Generator().manual_seed(0))
    _register_rms_norm(opset)
    try:
        with _traceable(model), warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (ids,), str(path), dynamo=False, input_names=["ids"],
                              output_names=["logits"], opset_version=opset,
                              dynamic_axes={"ids": {0: "batch", 1: "length"},
                                            "logits": {0: "batch", 1: "length"}})
    except Exception as exc:  # the exporter raises many kinds; say which block and why
        if disk_refusal(exc):
            raise  # said in one line by write_staged
        raise InteropError(f"ONNX export failed: {type(exc).__name__}: {str(exc)[:500]}") \
            from None
    onnx.checker.check_model(str(path))


def example_length(model) -> int:
    """A traced length past every sliding window and within every learned position table."""
    windows = [getattr(m, "window", 0) for _, m in model.attention_modules()]
    tables = [m.max_len for m in model.modules()
              if type(m).__name__ == "PositionalEncoding" and m.scheme == LEARNED]
    length = max([8, *[w + 2 for w in windows]])
    return min([length, *tables])


@contextlib.contextmanager
def _traceable(model):
    """Attention on its explicit path (a function listening at each block's "weights" point
    makes it so; it changes nothing), RoPE in real arithmetic and every mixture of experts
    dense."""
    from ..nn import MixtureOfExperts, SelfAttention, attached

    attention = {id(m) for _, m in model.attention_modules()}
    weights = {f"{n}.hook_weights" for n, m in model.named_modules() if id(m) in attention}
    swapped = [(m, "forward", _dense_moe_forward) for m in model.modules()
               if isinstance(m, MixtureOfExperts)]
    swapped += [(m, "_rope", _real_rope) for m in model.modules()
                if isinstance(m, SelfAttention) and m.position == ROPE]
    for m, name, fn in swapped:
        setattr(m, name, types.MethodType(fn, m))
    try:
        with attached(model, _look, names=weights):
            yield
    finally:
        for m, name, _ in swapped:
            delattr(m, name)  # back to the class's own method


def _look(_name, _point, _weights) -> None:
    """Listens, so the attention computes its weights explicitly; returns None: keeps them."""


def _real_rope(self, q, k, start: int):
    """SelfAttention._rope with cos and sin: the same rotation without complex numbers."""
    import torch

    from ..nn import apply_rope, rope_angles

    positions = torch.arange(start, start + q.shape[2], device=q.device)
    cos, sin = rope_angles(positions, self.head_dim, self.rope_base, self.rope_scaling,
                           self.rope_scaling_type)
    return apply_rope(q, cos, sin), apply_rope(k, cos, sin)


def _dense_moe_forward(self, x):
    """MixtureOfExperts.forward without data-dependent branches: the same top-k
    weights (:meth:`route`), applied to every expert's output (zero where not chosen)."""
    import torch

    B, T, D = x.shape
    flat = x.reshape(-1, D)
    _, top_i, weights = self.route(self.router(flat))
    weights = weights.to(x.dtype)
    mix = torch.zeros(flat.shape[0], self.num_experts, dtype=x.dtype).scatter(1, top_i, weights)
    out = torch.zeros_like(flat)
    for e, expert in enumerate(self.experts):
        out = out + mix[:, e:e + 1] * expert(flat)
    if self.shared is not None:
        out = out + self.shared(flat)
    return out.view(B, T, D)


_REGISTERED: set[int] = set()


def _register_rms_norm(opset: int) -> None:
    """aten::rms_norm has no ONNX symbolic before opset 23: spell it x / sqrt(mean(x^2)+eps) * w."""
    if opset in _REGISTERED:
        return
    import torch
    from torch.onnx import register_custom_op_symbolic, symbolic_helper

    @symbolic_helper.parse_args("v", "is", "v", "f")
    def rms_norm(g, x, shape, weight, eps):
        axes = g.op("Constant", value_t=torch.tensor(list(range(-len(shape), 0))))
        mean_square = g.op("ReduceMean", g.op("Mul", x, x), axes, keepdims_i=1)
        eps_t = g.op("Constant", value_t=torch.tensor(eps, dtype=torch.float32))
        y = g.op("Div", x, g.op("Sqrt", g.op("Add", mean_square, eps_t)))
        return y if symbolic_helper._is_none(weight) else g.op("Mul", y, weight)

    register_custom_op_symbolic("aten::rms_norm", rms_norm, opset)
    _REGISTERED.add(opset)
