"""Python identifiers for generated code: derived from node ids, never colliding with Python
keywords, builtins, torch.nn.Module attributes or names the generated code itself uses."""
from __future__ import annotations

import builtins
import keyword
import re

# names the generated code relies on, plus every attribute an nn.Module (or GraphModel) has
_FIXED = {"self", "cache", "layer", "torch", "nn", "F", "math", "super", "range",
          "BLOCKS", "family", "input_roles", "head_type", "vocab_size", "supports_cache",
          "graph", "source", "blocks", "attention_modules", "aux_loss", "new_cache",
          "reset_parameters",
          # a layer copy's own (GraphLayer): its hook points, their count, how they are fed
          "hooked", "hook_in", "hook_out", "hooked_from_outside", "_declare", "_hook_labels"}
_MODULE_ATTRS = {"add_module", "apply", "bfloat16", "buffers", "children", "compile", "cpu",
                 "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward",
                 "get_buffer", "get_extra_state", "get_parameter", "get_submodule", "half",
                 "ipu", "load_state_dict", "modules", "mtia", "named_buffers",
                 "named_children", "named_modules", "named_parameters", "parameters",
                 "register_backward_hook", "register_buffer", "register_forward_hook",
                 "register_forward_pre_hook", "register_full_backward_hook",
                 "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
                 "register_load_state_dict_pre_hook", "register_module", "register_parameter",
                 "register_state_dict_post_hook", "register_state_dict_pre_hook",
                 "requires_grad_", "set_extra_state", "set_submodule", "share_memory",
                 "state_dict", "to", "to_empty", "train", "training", "type", "xpu",
                 "zero_grad", "call_super_init"}
# the tfstudio.nn names the generated code is executed next to
NN_NAMES = {"Add", "CrossAttention", "DecodingCache", "Dropout", "FeedForward", "GraphLayer",
            "GraphModel", "LMHead", "MLMHead", "MixtureOfExperts", "Norm", "PositionalEncoding",
            "Recurrent", "SelfAttention", "TokenEmbedding", "alibi_slopes", "apply_rope",
            "rope_angles", "rotate_pairs", "sinusoidal_table", "Model", "build_model"}
RESERVED = _FIXED | _MODULE_ATTRS | NN_NAMES | set(dir(builtins))


def _recipe_classes() -> set[str]:
    """The module classes the block catalogue's recipes build (some registered from outside)."""
    from ..graph.schema import all_specs

    return {spec.recipe.module for spec in all_specs() if spec.recipe and spec.recipe.module}


def identifier(text: str) -> str:
    """``text`` made into a valid Python identifier (letters, digits, underscores)."""
    name = re.sub(r"\W", "_", str(text), flags=re.ASCII) or "node"
    if name[0].isdigit():
        name = "n_" + name
    return name


def camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in identifier(text).split("_")) or "Node"


class Names:
    """Hands out unique identifiers within one scope (a class's attributes, a function's
    locals), steering clear of reserved names and of each other."""

    def __init__(self, taken=()):
        self._taken = set(RESERVED) | set(taken) | _recipe_classes()

    def claim(self, wanted: str) -> str:
        base = identifier(wanted)
        if base.startswith("_"):
            base = "n" + base  # a leading "__" would be name-mangled inside a class body
        name, i = base, 1
        while name in self._taken or keyword.iskeyword(name) or keyword.issoftkeyword(name):
            i += 1
            name = f"{base}_{i}"
        self._taken.add(name)
        return name
