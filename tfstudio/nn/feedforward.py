"""Position-wise feed-forward networks and the mixture of experts."""
import torch
import torch.nn.functional as F
from torch import nn

from .hooks import Hooked, HookLabel

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu, "silu": F.silu,
               "gelu_tanh": lambda x: F.gelu(x, approximate="tanh")}
# gated variants: act(x W_gate) * (x W_up); the gate's activation per kind
GATES = {"glu": torch.sigmoid, "geglu": F.gelu, "swiglu": F.silu}
# how a mixture weights its chosen experts: over the chosen k (Mixtral), or by the router's
# probability itself (Switch Transformer; with top-1 the only one whose router the loss trains)
WEIGHTINGS = ("renormalised", "probability")


class FeedForward(Hooked):
    """Linear(d, d_ff) -> activation -> Linear(d_ff, d) -> dropout. Gated kinds (glu, geglu,
    swiglu) compute act(x W_gate) * (x W_up) with one fused ``up`` Linear(d, 2 d_ff) whose first
    d_ff output rows are W_gate and the next d_ff rows W_up."""

    residual_branch = True

    def __init__(self, d_model: int, d_ff: int, activation: str = "gelu", bias: bool = True,
                 dropout: float = 0.0):
        super().__init__()
        if activation not in ACTIVATIONS and activation not in GATES:
            known = ", ".join([*ACTIVATIONS, *GATES])
            raise ValueError(f"unknown activation '{activation}'; choose one of {known}")
        self.activation, self.d_ff, self.dropout = activation, d_ff, float(dropout)
        self.gated = activation in GATES
        self.up = nn.Linear(d_model, (2 if self.gated else 1) * d_ff, bias=bias)
        self.down = nn.Linear(d_ff, d_model, bias=bias)
        self._declare("pre", "gate", "act", "out")

    def _hook_labels(self) -> dict[str, HookLabel]:
        b = " + b" if self.up.bias is not None else ""
        gate = {"glu": "sigmoid", "geglu": "gelu", "swiglu": "silu"}.get(self.activation)
        return {"pre": HookLabel("up projection", f"u = x W_up{b}"),
                "gate": HookLabel("gate", f"g = {gate}(x W_gate{b})"),
                "act": HookLabel("gated" if self.gated else "activation",
                                 "h = g * u" if self.gated else f"h = {self.activation}(u)"),
                "out": HookLabel("down projection", f"y = h W_down{b}")}

    def residual_projections(self) -> list[nn.Linear]:
        return [self.down]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, hooked = self.up(x), self.hooked   # hooked 0: nothing listens, no point is passed
        if self.gated:
            gate, up = h.split(self.d_ff, dim=-1)
            gate = GATES[self.activation](gate)
            h = self.hook_pre(up) * self.hook_gate(gate) if hooked else up * gate
        else:
            h = ACTIVATIONS[self.activation](self.hook_pre(h) if hooked else h)
        y = self.down(self.hook_act(h) if hooked else h)
        y = self.hook_out(y) if hooked else y
        return F.dropout(y, self.dropout, self.training) if self.dropout > 0 else y

    def extra_repr(self) -> str:
        return f"activation={self.activation}"


class MixtureOfExperts(Hooked):
    """A router picks ``top_k`` of ``experts`` FFNs per token and mixes their outputs.

    router logits -> softmax -> top-k -> weights -> weighted sum of those experts' outputs (+ a
    shared expert every token uses, if any). ``weighting`` "renormalised" divides the chosen
    probabilities by their sum (Mixtral: w = p / sum(p_chosen)); "probability" keeps the
    router's probability (Switch Transformer: w = p). With top-1, renormalised weights are all
    p / p = 1, so the loss sends the router no gradient. Tokens are grouped per expert with
    index_select / index_add, never looped over one by one.

    After each forward: ``aux_loss`` = aux_loss_weight * E * sum_i f_i * P_i (Switch
    Transformer load balancing, counted over all k choices as Hugging Face's Mixtral does;
    f_i = fraction of tokens routed to expert i, P_i = mean router probability of expert i),
    differentiable through P, equal to aux_loss_weight * k when routing is perfectly even;
    ``last_expert_load`` [E] = f (detached; sums to k), which the trainer's curves read after
    each step for free (f is computed for the loss anyway). A probe reads the chosen experts at
    the "choices" point instead.

    Hook points: router logits, router probabilities, the chosen experts [B, T, k] (best
    first), their weights [B, T, k], each expert's own points (on the tokens routed to it) and
    the mixed output."""

    residual_branch = True

    def __init__(self, d_model: int, experts: int = 4, top_k: int = 2, d_ff: int = 512,
                 activation: str = "swiglu", bias: bool = False, shared_expert: bool = False,
                 aux_loss_weight: float = 0.01, weighting: str = "renormalised"):
        super().__init__()
        if not 1 <= top_k <= experts:
            raise ValueError(f"top_k ({top_k}) must be between 1 and the number of experts "
                             f"({experts})")
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {', '.join(WEIGHTINGS)}; "
                             f"got '{weighting}'")
        self.num_experts, self.top_k, self.weighting = experts, top_k, weighting
        self.aux_loss_weight = float(aux_loss_weight)
        self.router = nn.Linear(d_model, experts, bias=False)
        self.experts = nn.ModuleList(
            FeedForward(d_model, d_ff, activation, bias) for _ in range(experts))
        self.shared = FeedForward(d_model, d_ff, activation, bias) if shared_expert else None
        self.aux_loss = None
        self.last_expert_load = None
        self._declare("router", "probs", "choices", "weights", "out")

    def _hook_labels(self) -> dict[str, HookLabel]:
        shared = " + FFN_shared(x)" if self.shared is not None else ""
        return {"router": HookLabel("router logits", "r = x W_router"),
                "probs": HookLabel("router probabilities", "softmax(r)"),
                "choices": HookLabel("chosen experts", f"the top {self.top_k} experts per token"),
                "weights": HookLabel("expert weights", {
                    "renormalised": "w = p_chosen / sum(p_chosen)",
                    "probability": "w = p_chosen (the router's probability)"}[self.weighting]),
                "out": HookLabel("mixture output", f"y = sum_k w_k FFN_(e_k)(x){shared}")}

    def residual_projections(self) -> list[nn.Linear]:
        everyone = [*self.experts] + ([self.shared] if self.shared is not None else [])
        return [e.down for e in everyone]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        flat = x.reshape(-1, D)
        # the points see [B, T, ...], as every other block's do
        logits = self._hook(self.hook_router, self.router(flat), B, T)
        probs, top_i, weights = self.route(logits)
        probs = self._hook(self.hook_probs, probs, B, T)
        top_i = self._hook(self.hook_choices, top_i, B, T)
        weights = self._hook(self.hook_weights, weights.to(x.dtype), B, T)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            # an expert with no tokens still runs on an empty batch: its weights then get zero
            # gradients rather than none, which DistributedDataParallel requires
            token, slot = (top_i == e).nonzero(as_tuple=True)
            y = expert(flat.index_select(0, token)) * weights[token, slot, None]
            out = out.index_add(0, token, y)
        if self.shared is not None:
            out = out + self.shared(flat)
        self._keep_statistics(probs, top_i)
        out = out.view(B, T, D)
        return self.hook_out(out) if self.hooked else out

    def route(self, logits: torch.Tensor):
        """(probabilities [N, E], chosen experts [N, k] best first, their weights [N, k])."""
        probs = torch.softmax(logits.float(), dim=-1)
        top_p, top_i = probs.topk(self.top_k, dim=-1)
        if self.weighting == "renormalised":
            top_p = top_p / top_p.sum(dim=-1, keepdim=True)
        return probs, top_i, top_p

    @staticmethod
    def _hook(point, flat, B: int, T: int):
        return point(flat.view(B, T, -1)).reshape(B * T, -1) if point.fns else flat

    def _keep_statistics(self, probs, top_i) -> None:
        counts = torch.bincount(top_i.flatten(), minlength=self.num_experts).to(probs.dtype)
        load = counts / top_i.shape[0]                                      # f_i, sums to k
        importance = probs.mean(dim=0)                                      # P_i
        self.aux_loss = self.aux_loss_weight * self.num_experts * (load * importance).sum()
        self.last_expert_load = load.detach()

    def extra_repr(self) -> str:
        return f"experts={self.num_experts}, top_k={self.top_k}, weighting={self.weighting}"
