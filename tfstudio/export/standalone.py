"""Export as plain PyTorch: one readable ``model.py`` (the compiler's generated code with the
tfstudio.nn blocks it uses inlined) and ``model.safetensors``. Running it needs torch and the
safetensors package, nothing of tfstudio."""
from __future__ import annotations

from pathlib import Path

from .report import Report
from .source import resolve_source
from .staging import write_staged

LOADER = '''

def load_model(weights=None, device="cpu"):
    """The model with the weights in model.safetensors (read with safetensors), in eval mode."""
    import os
    from safetensors.torch import load_model as load_weights
    model = build_model()
    path = weights or os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.safetensors")
    load_weights(model, str(path), device=device)  # tied weights are stored once
    return model.to(device).eval()
'''


def export_pytorch(source, out_dir, *, state_dict: dict | None = None,
                   overwrite: bool = False) -> Report:
    """Write ``model.py`` + ``model.safetensors`` for ``source`` (see :func:`resolve_source`)."""
    from safetensors.torch import save_model

    from ..compiler import standalone_source

    src = resolve_source(source, state_dict)
    text = standalone_source(src.model) + LOADER

    def write(staging: Path, out: Path) -> None:
        (staging / "model.py").write_text(text, encoding="utf-8")
        save_model(src.model, str(staging / "model.safetensors"))
    write_staged(out_dir, overwrite, "export", write)
    family = src.model.family
    call = "model(src_ids, tgt_ids)" if family == "encoder-decoder" else "model(ids)"
    report = Report("export pytorch", Path(out_dir), None, ["model.py", "model.safetensors"])
    report.done.append(f"{family} model: `from model import load_model; model = load_model(); "
                       f"logits = {call}` (needs torch + safetensors only)")
    if not src.trained:
        report.done.append("weights are freshly initialised (the source had no trained ones)")
    report.left_out.append("the tokenizer (model.py maps token ids to logits)")
    return report
