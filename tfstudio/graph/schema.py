"""Block schemas: what a block is called, what it takes and what it gives, in plain data.

A schema knows nothing of torch. Block families (``tfstudio.blocks``) describe themselves with
these classes and register here; the graph layer consults the registry for ports, parameter
editors, shape inference and costs, so it never imports a block family directly.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

if TYPE_CHECKING:  # only for annotations: the graph model imports this module
    from .model import Node

# Port kinds. A wire runs from an output to an input whose kind accepts it.
IDS = "ids"          # LongTensor [B, T]
HIDDEN = "hidden"    # FloatTensor [B, T, D]
LOGITS = "logits"    # FloatTensor [B, T, V]
MEMORY = "memory"    # encoder output [B, S, D] read by cross-attention
PORT_KINDS = (IDS, HIDDEN, LOGITS, MEMORY)

# Which output kinds an input of a given kind accepts: an encoder's hidden stream *is* the memory.
ACCEPTS: dict[str, tuple[str, ...]] = {
    IDS: (IDS,),
    HIDDEN: (HIDDEN,),
    LOGITS: (LOGITS,),
    MEMORY: (MEMORY, HIDDEN),
}

Shape = tuple  # e.g. ("B", "T", 768); symbolic batch "B", lengths "T" (target) / "S" (source)


def kind_accepts(input_kind: str, output_kind: str) -> bool:
    return output_kind in ACCEPTS.get(input_kind, ())


@dataclass(frozen=True)
class PortSpec:
    name: str
    kind: str
    description: str = ""
    required: bool = True


@dataclass(frozen=True)
class ParamSpec:
    """One editable parameter. ``kind`` is int, float, bool, choice or str."""

    name: str
    kind: str
    default: Any
    description: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    label: str = ""

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ")

    def coerce(self, value: Any) -> Any:
        """Return ``value`` converted to this parameter's type, or raise ValueError saying why."""
        if self.kind == "bool":
            return self._coerce_bool(value)
        if self.kind == "choice":
            out = str(value)
            if out not in self.choices:
                raise ValueError(f"'{self.name}' must be one of {', '.join(self.choices)}; "
                                 f"got '{value}'")
            return out
        if self.kind not in ("int", "float"):
            if isinstance(value, (dict, list, tuple, set)):
                raise self._wrong_type(value)
            return str(value)
        return self._in_range(self._coerce_number(value))

    def _wrong_type(self, value: Any) -> ValueError:
        return ValueError(f"'{self.name}' expects a {self.kind}; got {value!r}")

    def _coerce_bool(self, value: Any) -> bool:
        if isinstance(value, str):
            if value.lower() in ("true", "1", "yes", "on"):
                return True
            if value.lower() in ("false", "0", "no", "off"):
                return False
            raise self._wrong_type(value)
        if not isinstance(value, (bool, int, float)):
            raise self._wrong_type(value)
        return bool(value)

    def _coerce_number(self, value: Any) -> int | float:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise self._wrong_type(value)
        try:
            number = float(value)
        except ValueError:
            raise self._wrong_type(value) from None
        if not math.isfinite(number):
            raise ValueError(f"'{self.name}' must be a finite number; got {value!r}")
        if self.kind == "float":
            return number
        if not number.is_integer():
            raise self._wrong_type(value)
        exact = isinstance(value, int) or (isinstance(value, str)
                                           and value.strip().lstrip("+-").isdigit())
        return int(value) if exact else int(number)  # big ints keep every digit

    def _in_range(self, out: int | float) -> int | float:
        if self.minimum is not None and out < self.minimum:
            raise ValueError(f"'{self.name}' must be at least {self.minimum}; got {out}")
        if self.maximum is not None and out > self.maximum:
            raise ValueError(f"'{self.name}' must be at most {self.maximum}; got {out}")
        return out


class ParamView(Mapping):
    """A block's parameters read as attributes (``p.heads``); each block type's class is a
    frozen dataclass generated from its :class:`ParamSpec` list (:meth:`BlockSpec.view`), a
    parameter left out holding its default. Also a read-only Mapping (``p["heads"]``, ``**p``),
    for hooks written against dicts and code that walks every parameter."""

    __slots__ = ()

    def __getitem__(self, name: str) -> Any:
        if name not in self.__dataclass_fields__:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self):
        return iter(self.__dataclass_fields__)

    def __len__(self) -> int:
        return len(self.__dataclass_fields__)


_PYTHON_TYPES = {"int": int, "float": float, "bool": bool, "choice": str, "str": str}
# the BlockSpec hooks whose first argument is the parameters
_PARAMS_HOOKS = ("inputs", "outputs", "infer", "count_params", "flops", "kv_bytes", "activations")

Params = ParamView          # what every hook below is given: a node's resolved parameters
Shapes = Mapping[str, Shape]        # shapes of a node's connected inputs, by port

# The hooks a block type may give (all pure Python over plain numbers; see BlockSpec).
PortsFn = Callable[[Params], Sequence[PortSpec]]
InferFn = Callable[[Params, Shapes], dict[str, Shape]]
CountFn = Callable[[Params, Shapes], int]
FlopsFn = Callable[[Params, Shapes, int], float]
KvBytesFn = Callable[[Params, Shapes, int], int]
ActivationsFn = Callable[[Params, Shapes, int], float]
SummaryFn = Callable[["Node"], str]


class CheckFn(Protocol):
    """Block-specific validation: ``ctx`` is a :class:`tfstudio.graph.validate.CheckContext`."""

    def __call__(self, node: "Node", in_shapes: Shapes, ctx: Any) -> list: ...


class WidthFn(Protocol):
    """The integer width of a connected input (the compiler raises a CompileError if unknown)."""

    def __call__(self, port: str = "x") -> int: ...


ArgsFn = Callable[[Params, WidthFn], dict[str, Any]]
InlineFn = Callable[[Params, Sequence[str]], str]

# How a compiled block takes the decoding cache.
NO_CACHE = "none"
STREAM_CACHE = "stream"   # positions / keys / recurrent state along the decoded stream
MEMORY_CACHE = "memory"   # reuses its projection of a fixed encoder memory


@dataclass(frozen=True)
class Recipe:
    """How the compiler writes a block as code, without torch: either a module (a class of
    ``tfstudio.nn``, or one given to ``tfstudio.nn.register_module``) built from ``args`` and
    called on the inputs, or an ``inline`` expression over the input expressions (a residual
    sum is ``x + y``, not a module).

    ``args(params, width)`` gives the constructor's keyword arguments (``width(port)`` is the
    int width of an input); those equal to ``defaults`` (the class's own defaults) are left out
    of the generated call. ``inputs`` are the ports in call order (default: the block's input
    ports). ``cache`` says whether the module takes the decoding cache."""

    module: str = ""
    args: ArgsFn | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    inputs: tuple[str, ...] | None = None
    cache: str = NO_CACHE
    inline: InlineFn | None = None


@dataclass
class BlockSpec:
    """Everything the editor, validator, cost model and compiler need to know about a block type.

    ``inputs``/``outputs`` are either fixed lists or functions of the parameters (an Add with
    ``n_inputs`` inputs). Optional hooks, all pure Python over plain numbers:

    - ``infer(params, in_shapes) -> {out_port: shape}``; ``in_shapes`` maps connected inputs
      to their shapes (missing when unconnected).
    - ``count_params(params, in_shapes) -> int``: trainable parameters of one instance.
    - ``flops(params, in_shapes, ctx) -> float``: forward FLOPs per token (multiply-add = 2),
      averaged over a sequence of ``ctx`` tokens (the context length).
    - ``kv_bytes(params, in_shapes, bytes_per_value) -> int``: KV-cache bytes per token.
    - ``activations(params, in_shapes, seq_len) -> float``: values kept for the backward
      pass, per token of a training batch of ``seq_len``-token sequences.
    - ``check(node, in_shapes, ctx) -> list[Diagnostic]``: block-specific validation; ``ctx``
      is a :class:`tfstudio.graph.validate.CheckContext` (``ctx.error(code, message, hint)``).
    - ``summary(node) -> str``: the short line the canvas shows under the node (and the
      generated code's comment); by default its first two parameters.

    ``keywords`` are words people search for it by that its title lacks ("ffn mlp");
    ``recipe`` is how the compiler writes it as code (None: it has no torch implementation).
    """

    type: str
    family: str
    title: str
    description: str
    params: tuple[ParamSpec, ...] = ()
    inputs: Sequence[PortSpec] | PortsFn = ()
    outputs: Sequence[PortSpec] | PortsFn = ()
    infer: InferFn | None = None
    count_params: CountFn | None = None
    flops: FlopsFn | None = None
    kv_bytes: KvBytesFn | None = None
    check: CheckFn | None = None
    activations: ActivationsFn | None = None
    summary: SummaryFn | None = None
    keywords: str = ""
    recipe: Recipe | None = None
    internal: bool = False  # not offered in the palette (group boundary nodes)
    extra: dict = field(default_factory=dict)

    def __setattr__(self, name: str, value: Any) -> None:
        """Every hook that reads parameters is handed their view, even when called with a dict
        (and when set after the spec is made: a group boundary's ports)."""
        if name in _PARAMS_HOOKS and callable(value):
            value = self._viewing(value)
        elif name == "recipe" and value is not None:
            value = dataclasses.replace(value, **{
                hook: self._viewing(getattr(value, hook)) for hook in ("args", "inline")
                if getattr(value, hook) is not None})
        super().__setattr__(name, value)

    def _viewing(self, hook: Callable) -> Callable:
        @functools.wraps(hook)
        def called(params: Mapping[str, Any], *rest):
            return hook(self.view(params), *rest)
        return called

    @functools.cached_property
    def _view_class(self) -> type:
        clashes = [p.name for p in self.params if hasattr(ParamView, p.name)]
        if clashes:
            raise ValueError(f"block '{self.type}': parameter names {clashes} are taken by the "
                             "parameter view's own methods; rename them")
        name = "".join(w.title() for w in self.type.split("_")) + "Params"
        return dataclasses.make_dataclass(
            name, [(p.name, _PYTHON_TYPES.get(p.kind, Any), field(default=p.default))
                   for p in self.params], bases=(ParamView,), frozen=True, eq=False)

    def view(self, params: Mapping[str, Any]) -> ParamView:
        """``params`` as this block type's typed view: ``view(p).heads``. Names the block does
        not have are left out (validation reports them); missing ones hold their default."""
        if isinstance(params, self._view_class):
            return params
        return self._view_class(**{k: v for k, v in params.items()
                                   if k in self._view_class.__dataclass_fields__})

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"block '{self.type}' has no parameter '{name}'")

    def well_formed(self, params: Mapping[str, Any]) -> bool:
        """Every parameter known and holding a valid value: only then are the hooks asked
        (a raw edit can leave anything; validation names the problem)."""
        for name, value in params.items():
            try:
                if self.param(name).coerce(value) != value:
                    return False
            except (KeyError, ValueError):
                return False
        return True

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def input_ports(self, params: Mapping[str, Any]) -> list[PortSpec]:
        return list(self.inputs(params) if callable(self.inputs) else self.inputs)

    def output_ports(self, params: Mapping[str, Any]) -> list[PortSpec]:
        return list(self.outputs(params) if callable(self.outputs) else self.outputs)

    def summarize(self, node: "Node") -> str:
        """The canvas line for ``node``: its ``summary`` hook, else its first two parameters."""
        if self.summary is not None:
            return self.summary(node)
        params = node.resolved_params()
        return " · ".join(f"{p.title} {_value_label(params[p.name])}" for p in self.params[:2]
                          if p.name in params)


def _value_label(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


class UnknownBlockError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0])


_REGISTRY: dict[str, BlockSpec] = {}


def register(spec: BlockSpec) -> BlockSpec:
    _REGISTRY[spec.type] = spec
    return spec


def unregister(block_type: str) -> None:
    """Forget a block type (a test's toy block, a plug-in being unloaded)."""
    _REGISTRY.pop(block_type, None)


def get_spec(block_type: str) -> BlockSpec:
    try:
        return _REGISTRY[block_type]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none registered"
        raise UnknownBlockError(
            f"unknown block type '{block_type}'. Known types: {known}"
        ) from None


def all_specs() -> list[BlockSpec]:
    return list(_REGISTRY.values())


def families() -> dict[str, list[BlockSpec]]:
    out: dict[str, list[BlockSpec]] = {}
    for spec in _REGISTRY.values():
        if not spec.internal:
            out.setdefault(spec.family, []).append(spec)
    return out
