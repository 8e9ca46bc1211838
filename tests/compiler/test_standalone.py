"""standalone_source: one file that rebuilds a compiled model with torch alone."""
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import tfstudio.nn
from tfstudio.compiler import compile_graph, standalone_source
from tfstudio.compiler.standalone import StandaloneError
from tfstudio.nn import (MODULES, DecodingCache, GraphModel, HookPoint, LMHead, Norm,
                         SelfAttention, TokenEmbedding, rotate_pairs)
from tfstudio.nn.hooks import Hooked
from tfstudio.presets import load_preset

NN_DIR = Path(tfstudio.nn.__file__).parent

# tiny-mistral's 16-token window and tiny-alibi-gpt's biases take mask paths the others skip
MODELS = ["tiny-gpt", "tiny-llama", "tiny-mistral", "tiny-alibi-gpt", "tiny-t5", "tiny-mixtral",
          "tiny-lstm", "tiny-bert", "tiny-window-lm"]

RUNNER = textwrap.dedent('''
    import importlib.util, sys
    sys.modules["tfstudio"] = None          # importing tfstudio now fails, whatever is installed
    import torch
    for name in sys.argv[1:]:
        spec = importlib.util.spec_from_file_location(name.replace("-", "_"), f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        model = module.build_model().eval()
        model.load_state_dict(torch.load(f"{name}.pt", weights_only=True))
        inputs = torch.load(f"{name}.in.pt", weights_only=True)
        with torch.no_grad():
            out = {"full": model(*inputs)}
            if model.supports_cache:
                cache = model.new_cache()
                *fixed, stream = inputs
                out["cached"] = torch.cat([model(*fixed, stream[:, :3], cache=cache),
                                           model(*fixed, stream[:, 3:], cache=cache)], 1)
        torch.save(out, f"{name}.out.pt")
    print("ok", "tfstudio" in sys.modules and sys.modules["tfstudio"] is not None)
''')


@pytest.mark.slow
def test_standalone_file_reproduces_the_logits_without_tfstudio(tmp_path):
    expected = {}
    for name in MODELS:
        model = compile_graph(load_preset(name)).eval()
        ids = torch.randint(0, model.vocab_size, (2, 20))  # past the 16-token window
        inputs = ((torch.randint(0, model.vocab_size, (2, 5)), ids)
                  if model.family == "encoder-decoder" else (ids,))
        source = standalone_source(model)
        assert "tfstudio" not in "".join(l for l in source.splitlines()
                                         if l.startswith(("import", "from")))
        (tmp_path / f"{name}.py").write_text(source)
        torch.save(model.state_dict(), tmp_path / f"{name}.pt")
        torch.save(inputs, tmp_path / f"{name}.in.pt")
        with torch.no_grad():
            expected[name] = model(*inputs)
    (tmp_path / "runner.py").write_text(RUNNER)
    done = subprocess.run([sys.executable, "-I", "runner.py", *MODELS], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", "False"]
    for name in MODELS:
        out = torch.load(tmp_path / f"{name}.out.pt", weights_only=True)
        assert torch.allclose(out["full"], expected[name], atol=1e-6), name
        if "cached" in out:
            assert torch.allclose(out["cached"], expected[name], atol=1e-5), name


def test_standalone_file_holds_only_the_classes_the_model_uses_each_whole():
    """tiny-llama uses an embedding, RoPE self-attention, RMSNorm, SwiGLU and a head: nothing of
    cross-attention, experts, recurrent cells, masked-LM heads or position tables; the classes
    it does use come as their source file has them, less the hook-point tables only tfstudio's
    probes call."""
    model = compile_graph(load_preset("tiny-llama"))
    source = standalone_source(model)
    for unused in ("class CrossAttention", "class MixtureOfExperts", "class Recurrent",
                   "class MLMHead", "class PositionalEncoding", "def sinusoidal_table",
                   "class Add", "class Dropout", "Do not edit by hand", "class HookLabel",
                   "def _hook_labels", "def _attention_points", "def attached"):
        assert unused not in source, unused
    for used in (SelfAttention, Norm, tfstudio.nn.FeedForward, LMHead, TokenEmbedding,
                 DecodingCache, GraphModel, rotate_pairs, Hooked, HookPoint):
        members = [used] if inspect.isfunction(used) else [
            m for n, m in vars(used).items() if inspect.isfunction(m) and n != "_hook_labels"]
        for member in members:   # each copied as written
            assert textwrap.indent(textwrap.dedent(inspect.getsource(member)),
                                   "    " * (member is not used)) in source, member.__qualname__
    assert "    def _rotation(" in source and "    def _declare(" in source  # called
    lines = source.splitlines()
    package = sum(len(f.read_text().splitlines()) for f in NN_DIR.glob("*.py"))
    assert len(lines) < package, (len(lines), package)  # not the whole tfstudio.nn package
    assert max(len(line) for line in lines) <= 100
    # the generated part reads like a hand-written pre-norm block
    assert "        x = x + self.attn(self.norm_attn(x), cache)\n" in source
    assert "        x = x + self.ffn(self.norm_ffn(x))\n" in source
    assert "        logits = self.head(self.final_norm(x))\n" in source


def test_exported_model_py_of_tiny_llama_loads_its_weights(tmp_path):
    from tfstudio.export import export_pytorch

    export_pytorch(load_preset("tiny-llama"), tmp_path / "out")
    lines = (tmp_path / "out" / "model.py").read_text().splitlines()
    # issue 25's bound on the standalone source and load_model(): 492 lines at this writing (601
    # with a hooked copy of each forward and attention's explicit path, 687 with the hook-point
    # tables); the rest is whole units the model calls (test_standalone_file_reproduces_...
    # and test_export_formats check that it computes what the compiled model does)
    assert len(lines) <= 500, len(lines)
    assert max(len(line) for line in lines) <= 100
    assert "def load_model(" in "\n".join(lines)


class FeedForward(torch.nn.Module):
    """A plug-in in place of tfstudio.nn's FeedForward (its name, so the generated code reaches
    it), with a private method of each kind the copier keeps or leaves behind."""

    def __init__(self, d_model: int, d_ff: int, activation: str = "gelu", bias: bool = True):
        super().__init__()
        self.up = torch.nn.Linear(d_model, d_ff, bias=bias)
        self.down = torch.nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x):
        return self._down(torch.relu(self.up(x))) * getattr(self, "_by_name")()

    def _down(self, h):   # called as self._down
        return self.down(h)

    def _by_name(self):   # called through a string
        return 0.5

    def _load_from_state_dict(self, *args, **kwargs):   # torch calls it by name
        super()._load_from_state_dict(*args, **kwargs)

    def _never_called(self):
        return 0.0


def test_a_private_method_nothing_calls_stays_behind_and_the_rest_are_copied(monkeypatch):
    monkeypatch.setitem(MODULES, "FeedForward", FeedForward)
    model = compile_graph(load_preset("tiny-gpt")).eval()
    assert isinstance(model.layers[0].ffn, FeedForward)
    source = standalone_source(model)
    for kept in ("_down", "_by_name", "_load_from_state_dict"):
        assert f"    def {kept}(" in source, kept
    assert "_never_called" not in source
    namespace = {}
    exec(compile(source, "model.py", "exec"), namespace)   # what is left is whole
    built = namespace["build_model"]().eval()
    built.load_state_dict(model.state_dict())
    ids = torch.randint(0, 256, (2, 7))
    with torch.no_grad():
        assert torch.allclose(built(ids), model(ids), atol=1e-6)


@pytest.mark.parametrize("weighting", ["probability", "renormalised"])
def test_standalone_top_1_mixture_weights_its_experts_as_the_compiled_one(weighting):
    from tfstudio.graph.templates import transformer_lm

    graph = transformer_lm(name="s", description="", vocab=64, d_model=32, layers=1, heads=4,
                           d_ff=32, max_len=32, moe={"experts": 4, "top_k": 1,
                                                     "weighting": weighting})
    model = compile_graph(graph).eval()
    source = standalone_source(model)
    assert (f"weighting='{weighting}'" in source) == (weighting == "probability")  # else default
    namespace = {}
    exec(compile(source, "model.py", "exec"), namespace)
    built = namespace["build_model"]().eval()
    built.load_state_dict(model.state_dict())
    ids = torch.randint(0, 64, (2, 9))
    with torch.no_grad():
        assert torch.allclose(built(ids), model(ids), atol=1e-6)


def test_a_block_class_defined_inside_a_function_is_refused_by_name(monkeypatch):
    def make_class():
        class Local(torch.nn.Module):
            def forward(self, x):
                return x
        return Local

    model = compile_graph(load_preset("tiny-gpt"))
    monkeypatch.setitem(MODULES, "Norm", make_class())  # what the generated code will read
    with pytest.raises(StandaloneError, match=r"make_class.<locals>.Local .* define it at "
                                              "module level"):
        standalone_source(model)
