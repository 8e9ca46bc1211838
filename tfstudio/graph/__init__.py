"""The architecture as data. Imports neither torch nor Qt (a test enforces it)."""
from .commands import (AddNode, Command, Connect, ConnectionRefused, Disconnect, Document,
                       GraphEvent, Macro, MoveNodes, RemoveNodes, ReplaceGraph, SetParam, SetTitle,
                       group_command, group_nodes, new_node, ungroup_command, ungroup_node)
from .model import GROUP, GROUP_INPUT, GROUP_OUTPUT, Edge, Graph, GraphError, Node, graph_at
from .schema import BlockSpec, ParamSpec, PortSpec, all_specs, families, get_spec
from .serialize import (FORMAT_VERSION, GraphFileError, dumps, graph_from_dict, graph_to_dict,
                        load_graph_file, loads, save_graph)

__all__ = [n for n in dir() if not n.startswith("_")]
