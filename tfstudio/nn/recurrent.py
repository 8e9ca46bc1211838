"""Recurrent sequence mixers (RNN, LSTM, GRU): the baselines attention replaced."""
import torch
from torch import nn

from .hooks import Hooked, HookLabel

CELLS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}


class Recurrent(Hooked):
    """Reads the sequence left to right with torch's batch-first RNN, LSTM or GRU.

    ``rnn`` holds the cell (parameter names ``rnn.weight_ih_l0`` ...). With a decoding cache the
    final state is carried over to the next chunk, so feeding a sequence in pieces gives the same
    outputs as feeding it whole. Hook points: the input and the hidden state per position."""

    def __init__(self, d_model: int, cell: str = "lstm", hidden_size: int = 128,
                 layers: int = 1, dropout: float = 0.0):
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"recurrent cell must be one of {', '.join(CELLS)}; got '{cell}'")
        self.cell = cell
        # torch applies this dropout between stacked layers only
        self.rnn = CELLS[cell](d_model, hidden_size, num_layers=layers, batch_first=True,
                               dropout=float(dropout) if layers > 1 else 0.0)
        self._declare("in", "out")

    def _hook_labels(self) -> dict[str, HookLabel]:
        return {"in": HookLabel("input", "x"),
                "out": HookLabel("hidden state", {
                    "lstm": "h_t = o_t * tanh(c_t), c_t = f_t * c_(t-1) + i_t * g_t",
                    "gru": "h_t = (1 - z_t) * n_t + z_t * h_(t-1)",
                    "rnn": "h_t = tanh(x_t W_ih + h_(t-1) W_hh + b)"}[self.cell])}

    def forward(self, x: torch.Tensor, cache=None) -> torch.Tensor:
        state = cache.state(self) if cache is not None else None
        x = self.hook_in(x) if self.hooked else x
        y, final = self.rnn(x, state.get("h") if state is not None else None)
        if state is not None:
            state["h"] = final
        return self.hook_out(y) if self.hooked else y
