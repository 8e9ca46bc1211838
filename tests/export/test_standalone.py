"""The exported model.py's dependencies, as its docstring and docs/INTEROP.md state them:
build_model() needs PyTorch alone, load_model() PyTorch and safetensors; run in a fresh
interpreter where tfstudio (and, in turn, safetensors) cannot be imported."""
import json
import subprocess
import sys
import textwrap

import pytest
import torch

from tfstudio.compiler import compile_graph
from tfstudio.export import export_pytorch
from tfstudio.presets import load_preset

RUNNER = textwrap.dedent('''
    import json, sys
    sys.modules["tfstudio"] = None                 # importing tfstudio now fails
    if sys.argv[1] == "torch-only":
        sys.modules["safetensors"] = None          # as if it were not installed
    import torch
    baseline = set(sys.modules)                    # torch and what torch itself imports
    sys.path.insert(0, "out")
    import model
    report = {"says": " ".join((model.__doc__ + model.load_model.__doc__).split())}
    torch.manual_seed(0)
    built = model.build_model().eval()
    ids = torch.arange(12).view(2, 6)
    report["built"] = list(built(ids).shape)
    try:
        loaded = model.load_model()
        torch.save(loaded(ids), "logits.pt")
        report["loaded"] = True
    except ModuleNotFoundError as e:
        report["loaded"] = str(e)
    report["new"] = sorted({m.split(".")[0] for m in set(sys.modules) - baseline}
                           - set(sys.stdlib_module_names) - {"model", "torch"})
    print(json.dumps(report))
''')


def run(tmp_path, mode: str) -> dict:
    done = subprocess.run([sys.executable, "-I", "runner.py", mode], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow   # two fresh interpreters importing torch
def test_build_model_needs_only_torch_and_load_model_adds_safetensors(tmp_path):
    model = compile_graph(load_preset("tiny-llama")).eval()
    export_pytorch(model, tmp_path / "out")
    (tmp_path / "runner.py").write_text(RUNNER)

    torch_only = run(tmp_path, "torch-only")
    assert torch_only["built"] == [2, 6, model.vocab_size] and torch_only["new"] == []
    assert "safetensors" in torch_only["loaded"]          # the one thing load_model adds
    said = torch_only["says"]   # what the file says of itself: true, as run above
    assert "build_model() needs only PyTorch" in said and "read with safetensors" in said

    with_safetensors = run(tmp_path, "with-safetensors")
    assert with_safetensors["loaded"] is True and with_safetensors["new"] == ["safetensors"]
    with torch.no_grad():
        expected = model(torch.arange(12).view(2, 6))
    assert torch.allclose(torch.load(tmp_path / "logits.pt", weights_only=True), expected,
                          atol=1e-6)
