"""tfstudio: build, train and look inside transformers on a node graph.

Importing the package registers the block catalogue's schemas (pure Python). Torch is imported
only when a model is compiled or trained, so the editor opens fast.
"""
from . import blocks as _blocks  # noqa: F401  (registers every block schema)

__version__ = "0.1.0"


def load_graph(name_or_path):
    """A graph from a preset name (see ``tfstudio presets``) or a path to a .json file."""
    from .presets import load_preset_or_file
    return load_preset_or_file(name_or_path)


def compile_graph(graph, **options):
    """Compile a graph into a ``torch.nn.Module`` (imports torch)."""
    from .compiler import compile_graph as _compile
    return _compile(graph, **options)
