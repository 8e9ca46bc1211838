"""A node's code from its block type's recipe (``BlockSpec.recipe``): the module to build and
how it is called, or the expression written inline. Pure Python (no torch)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..graph.schema import NO_CACHE, Recipe, get_spec
from .errors import CompileError, where


@dataclass(frozen=True)
class BlockCall:
    cls: str                          # a tfstudio.nn class (or one given to register_module)
    kwargs: dict[str, Any]            # constructor arguments that differ from the defaults
    inputs: tuple[str, ...]           # input ports, in call order
    cache: str = NO_CACHE
    recipe: Recipe | None = None
    params: dict[str, Any] | None = None  # the coerced parameters (for an inline recipe)

    @property
    def inline(self) -> bool:
        return self.recipe is not None and self.recipe.inline is not None

    def expression(self, args: list[str]) -> str:
        """The inline recipe's expression over the input expressions ``args``."""
        return self.recipe.inline(self.params, args)


def block_call(node, in_shapes: dict[str, tuple], path: tuple[str, ...]) -> BlockCall:
    """The code for ``node`` (a non-group, non-boundary, non-input block)."""
    spec = get_spec(node.type)
    recipe = spec.recipe
    if recipe is None or not (recipe.inline or (recipe.module and recipe.args)):
        raise CompileError(f"{where(node.id, path)}: block type '{node.type}' has no torch "
                           "implementation in tfstudio.nn yet; replace the node or add one")
    params = _checked_params(node, path)
    inputs = recipe.inputs or tuple(p.name for p in spec.input_ports(params))
    if recipe.inline:
        return BlockCall("", {}, inputs, recipe.cache, recipe, params)
    kwargs = recipe.args(params, _Widths(node, in_shapes, path))
    kwargs = {k: v for k, v in kwargs.items()
              if not (k in recipe.defaults and _same(recipe.defaults[k], v))}
    return BlockCall(recipe.module, kwargs, inputs, recipe.cache, recipe, params)


def _same(default: Any, value: Any) -> bool:
    return type(default) is type(value) and default == value


def _checked_params(node, path) -> dict[str, Any]:
    """Every parameter coerced to its declared type, so only plain literals reach the code."""
    spec = get_spec(node.type)
    out = {}
    for name, value in node.resolved_params().items():
        try:
            value = spec.param(name).coerce(value)
        except (KeyError, ValueError) as exc:
            raise CompileError(f"{where(node.id, path)}: {exc}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise CompileError(f"{where(node.id, path)}: '{name}' must be a finite number")
        out[name] = value
    return out


class _Widths:
    """``width(port)``: the int width of a connected input, or a CompileError saying why not."""

    def __init__(self, node, in_shapes, path):
        self.node, self.shapes, self.path = node, in_shapes, path

    def __call__(self, port: str = "x") -> int:
        shape = self.shapes.get(port)
        if not shape:
            raise CompileError(f"{where(self.node.id, self.path)}: the width of input '{port}' "
                               "is unknown; connect it to a stream whose width is known")
        width = shape[-1]
        if not isinstance(width, int):
            raise CompileError(f"{where(self.node.id, self.path)}: input '{port}' has a "
                               f"symbolic width {width!r}; a number is needed to build weights")
        return width
