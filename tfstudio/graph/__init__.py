"""The architecture as data. Imports neither torch nor Qt (a test enforces it)."""
from .edits import (AddNode, Connect, ConnectionRefused, Disconnect, Document, Edit, GraphEvent,
                    Macro, MoveNodes, RemoveNodes, ReplaceGraph, SetParam, SetTitle, ShowRunGraph,
                    new_node)
from .edits import GraphChange, KeepTidy, kept_tidy, tidy_edit
from .grouping import group_edit, group_nodes, ungroup_edit, ungroup_node
from .model import GROUP, GROUP_INPUT, GROUP_OUTPUT, Edge, Graph, GraphError, Node, graph_at
from .schema import BlockSpec, ParamSpec, PortSpec, all_specs, families, get_spec
from .serialize import (FORMAT_VERSION, GraphFileError, dumps, graph_from_dict, graph_to_dict,
                        load_graph_file, loads, save_graph)
from .compare import model_signature, same_model
from .cost import CostReport, MemoryEstimate, estimate_cost, training_memory
from .placement import identify_placement, rewrite_placement
from .switches import layer_summary, set_attention_kind, set_ffn_kind, set_positional_scheme
from .validate import Diagnostic, has_errors, validate

__all__ = [n for n in dir() if not n.startswith("_")]
