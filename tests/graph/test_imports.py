"""The graph layer, the block schemas and the presets work where torch and Qt cannot be imported
(docs/ARCHITECTURE.md): a meta-path finder makes every import of them fail in a fresh process."""
import subprocess
import sys
import textwrap

BLOCKER = textwrap.dedent("""
    import sys

    class Forbidden:
        BLOCKED = ("torch", "PySide6", "shiboken6", "pyqtgraph")

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in self.BLOCKED:
                raise ImportError(f"{name} is blocked in this test")
            return None

    sys.meta_path.insert(0, Forbidden())
""")


def run_blocked(code: str) -> subprocess.CompletedProcess:
    script = BLOCKER + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)


def test_the_blocker_really_blocks():
    result = run_blocked("import torch")
    assert result.returncode != 0
    assert "torch is blocked in this test" in result.stderr


def test_graph_blocks_and_presets_import_and_work_without_torch_or_qt():
    result = run_blocked("""
        import tfstudio.graph, tfstudio.blocks, tfstudio.presets
        from tfstudio.graph import estimate_cost, validate
        from tfstudio.graph.placement import identify_placement, rewrite_placement
        from tfstudio.graph.switches import set_attention_kind
        from tfstudio.presets import load_preset, preset_names
        assert len(preset_names()) >= 20
        big = load_preset("gpt3-175b")
        assert validate(big) == []
        print(estimate_cost(big).total_params)
        layer = load_preset("bert-base").node("layers").subgraph
        assert identify_placement(rewrite_placement(layer, "pre")) == "pre"
        set_attention_kind(layer, "mqa")
        assert not any(m.split(".")[0] in ("torch", "PySide6") for m in sys.modules)
    """)
    assert result.returncode == 0, result.stderr
    total = int(result.stdout.split()[-1])
    assert abs(total - 175e9) / 175e9 < 0.01  # costed without allocating anything


def test_inspect_command_runs_without_torch_or_qt():
    result = run_blocked("""
        import argparse
        from tfstudio.cli import inspect
        parser = argparse.ArgumentParser()
        inspect.configure(parser)
        raise SystemExit(inspect.run(parser.parse_args(["tiny-gpt"])))
    """)
    assert result.returncode == 0, result.stderr
    assert "Parameters          132,864" in result.stdout
