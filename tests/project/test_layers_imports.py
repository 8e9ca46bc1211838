"""The layers of docs/ARCHITECTURE.md: a package imports only from packages below it (checked on
the source)."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tfstudio"

# the package root's API (tfstudio.load_graph, compile_graph) and the presets it loads: usable by
# every layer above the compiler
ROOT = {"presets", "load_graph", "compile_graph", "__version__"}
# each package with the tfstudio packages it may import (its own and those below it)
ALLOWED = {
    "graph": {"graph"},
    "blocks": {"blocks", "graph"},
    "nn": {"nn"},  # torch only: exports inline these modules
    "compiler": {"compiler", "nn", "blocks", "graph"},
    "data": {"data"},
    "runs": {"runs", "data", "compiler", "graph"},
    "export": {"export", "runs", "data", "compiler", "nn", "blocks", "graph"} | ROOT,
    "probes": {"probes", "runs", "data", "compiler", "nn", "blocks", "graph"} | ROOT,
    "train": {"train", "probes", "runs", "data", "compiler", "nn", "blocks", "graph"} | ROOT,
    "experiments": {"experiments", "train", "probes", "runs", "data", "compiler", "nn", "blocks",
                    "graph"} | ROOT,
    "gui": {"gui", "experiments", "train", "probes", "export", "runs", "data", "compiler", "nn",
            "blocks", "graph"} | ROOT,
    # the command line sits on top: every sub-command may use any layer
    "cli": {"cli", "gui", "experiments", "train", "probes", "export", "runs", "data", "compiler",
            "nn", "blocks", "graph"} | ROOT,
}


def tfstudio_imports(path: Path) -> set[str]:
    """The tfstudio packages a module imports, resolved from absolute and relative imports."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = parts[:len(parts) - node.level]
                target = list(base) + (node.module.split(".") if node.module else [])
                if len(target) == 1:  # "from .. import x": x is the package
                    target += [alias.name for alias in node.names][:1]
            else:
                target = (node.module or "").split(".")
            if target[0] == "tfstudio" and len(target) > 1:
                found.add(target[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "tfstudio" and len(names) > 1:
                    found.add(names[1])
    return found


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_downwards(layer):
    bad = {}
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        upward = tfstudio_imports(path) - ALLOWED[layer]
        if upward:
            bad[str(path.relative_to(PACKAGE))] = sorted(upward)
    assert not bad, f"imports against docs/ARCHITECTURE.md's layer order: {bad}"


def test_only_the_gui_imports_qt():
    for path in PACKAGE.rglob("*.py"):
        if "gui" in path.relative_to(PACKAGE).parts:
            continue
        text = path.read_text()
        assert "PySide6" not in text and "pyqtgraph" not in text, path


# gui modules that decide what a widget shows, so their tests need no QApplication (issue 41:
# rules in the model, widgets as adapters): they must stay importable without Qt
QT_FREE_GUI = (
    "tfstudio.gui.ablation_marks",
    "tfstudio.gui.block_look",
    "tfstudio.gui.canvas_gestures",
    "tfstudio.gui.canvas_grid",
    "tfstudio.gui.canvas_units",
    "tfstudio.gui.clipboard",
    "tfstudio.gui.code_lines",
    "tfstudio.gui.cost_lines",
    "tfstudio.gui.delete_rules",
    "tfstudio.gui.device_memory",
    "tfstudio.gui.drop_rules",
    "tfstudio.gui.editor_state",
    "tfstudio.gui.errors",
    "tfstudio.gui.file_lines",
    "tfstudio.gui.fuzzy",
    "tfstudio.gui.gallery_lines",
    "tfstudio.gui.graph_report",
    "tfstudio.gui.ink",
    "tfstudio.gui.inspector_lines",
    "tfstudio.gui.layer_switches",
    "tfstudio.gui.lesson_lines",
    "tfstudio.gui.move_rules",
    "tfstudio.gui.out_of_view",
    "tfstudio.gui.palette_rows",
    "tfstudio.gui.param_count",
    "tfstudio.gui.problem_lines",
    "tfstudio.gui.problem_marks",
    "tfstudio.gui.recovery",
    "tfstudio.gui.report_plots",
    "tfstudio.gui.search_results",
    "tfstudio.gui.session_model",
    "tfstudio.gui.summaries",
    "tfstudio.gui.text",
    "tfstudio.gui.title_lines",
    "tfstudio.gui.training.attention_lines",
    "tfstudio.gui.training.axis_range",
    "tfstudio.gui.training.compare_job",
    "tfstudio.gui.training.compare_lines",
    "tfstudio.gui.training.curve_hints",
    "tfstudio.gui.training.curve_math",
    "tfstudio.gui.training.defaults",
    "tfstudio.gui.training.embedding_map",
    "tfstudio.gui.training.experts_lines",
    "tfstudio.gui.training.explain_colours",
    "tfstudio.gui.training.explain_lines",
    "tfstudio.gui.training.explain_links",
    "tfstudio.gui.training.explain_pictures",
    "tfstudio.gui.training.explain_read",
    "tfstudio.gui.training.explain_state",
    "tfstudio.gui.training.export_formats",
    "tfstudio.gui.training.flow_layout",
    "tfstudio.gui.training.generation",
    "tfstudio.gui.training.heatmap_cells",
    "tfstudio.gui.training.heatmap_labels",
    "tfstudio.gui.training.heatmap_scale",
    "tfstudio.gui.training.heatmap_window",
    "tfstudio.gui.training.history",
    "tfstudio.gui.training.jobs",
    "tfstudio.gui.training.kept_choice",
    "tfstudio.gui.training.live_look",
    "tfstudio.gui.training.model_host",
    "tfstudio.gui.training.next_token_lines",
    "tfstudio.gui.training.opened_runs",
    "tfstudio.gui.training.palette",
    "tfstudio.gui.training.positions_math",
    "tfstudio.gui.training.probe_text",
    "tfstudio.gui.training.redraw_pace",
    "tfstudio.gui.training.run_events",
    "tfstudio.gui.training.run_lifecycle",
    "tfstudio.gui.training.run_lines",
    "tfstudio.gui.training.series",
    "tfstudio.gui.training.setup_lines",
    "tfstudio.gui.training.shown_state",
    "tfstudio.gui.training.shown_views",
    "tfstudio.gui.training.step_slider",
    "tfstudio.gui.training.strip_layout",
    "tfstudio.gui.training.telemetry",
    "tfstudio.gui.training.token_text",
    "tfstudio.gui.wire_rules",
    "tfstudio.gui.zoom_rules",
)


@pytest.mark.parametrize("module", QT_FREE_GUI)
def test_the_gui_models_import_no_qt(module):
    code = (f"import sys, {module}; "
            "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", f"{module} imports {out}"
