"""From (graph, corpus, tokenizer) to the batches of the graph's objective.

The objective follows the graph's head: an LM head trains as a causal LM, a masked-LM head as a
masked LM, a seq2seq head as an encoder-decoder with teacher forcing. The corpus decides the
sampling: text corpora give random windows of the token cache; synthetic tasks give fresh
examples whose answers are the only positions with a loss (so accuracy means "answers right").
Every sampler is a pure function of (seed, step), so a resumed run draws the same batches.
"""
from __future__ import annotations

import copy

import torch

from ..data import (DataError, TaskSampler, WindowSampler, build_tokenizer, eval_windows, load_corpus,
                    mlm_batch, split_train_val, token_array)
from ..graph import Graph
from ..graph import block_types as bt
from ..runs.config import TrainConfig
from .objectives import IGNORE, Batch

OBJECTIVE_OF_HEAD = {bt.LM_HEAD: "causal-lm", bt.MLM_HEAD: "masked-lm", bt.SEQ2SEQ_HEAD: "seq2seq"}


def graph_objective(graph: Graph) -> str:
    heads = {n.type for _, n in graph.walk() if n.type in OBJECTIVE_OF_HEAD}
    if len(heads) != 1:
        raise ValueError("the graph needs exactly one kind of output head (LM, masked-LM or "
                         f"seq2seq) to be trained; it has {sorted(heads) or 'none'}")
    return OBJECTIVE_OF_HEAD[heads.pop()]


def fit_graph_to_tokenizer(graph: Graph, tokenizer) -> Graph:
    """A copy of ``graph`` whose embeddings and heads use the tokenizer's vocabulary size."""
    fitted = copy.deepcopy(graph)
    for _, node in fitted.walk():
        if "vocab_size" in node.resolved_params():
            node.params["vocab_size"] = tokenizer.vocab_size
    return fitted


class Pipeline:
    """Train and validation batches for one objective; ``state_dict`` is the data position."""

    objective: str
    reports_accuracy = False

    def train_batch(self, batch_size: int) -> Batch:
        raise NotImplementedError

    def val_batches(self, n: int, batch_size: int) -> list[Batch]:
        raise NotImplementedError

    def state_dict(self) -> dict:
        return {"sampler": self.sampler.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.sampler.load_state_dict(state["sampler"])


class TextLM(Pipeline):
    objective = "causal-lm"

    def __init__(self, tokens, cfg: TrainConfig, tokenizer):
        self.train_tokens, self.val_tokens = split_train_val(tokens, cfg.val_fraction)
        if len(self.val_tokens) < cfg.seq_len + 1:
            raise DataError(
                f"the validation part of this corpus ({len(self.val_tokens)} tokens, the last "
                f"{cfg.val_fraction:.0%}) is shorter than one window of {cfg.seq_len + 1} tokens; "
                "use a larger corpus, a shorter --seq-len or a larger --val-fraction")
        self.sampler = WindowSampler(self.train_tokens, cfg.seq_len, cfg.batch_size, cfg.seed)
        self.cfg, self.tokenizer = cfg, tokenizer
        self._val = None

    def train_batch(self, batch_size):
        x, y = self.sampler.next_batch()
        return Batch((x,), y)

    def val_batches(self, n, batch_size):
        if self._val is None:
            self._val = [Batch((x,), y) for x, y in
                         eval_windows(self.val_tokens, self.cfg.seq_len, batch_size, n)]
        return self._val


class TextMLM(TextLM):
    objective = "masked-lm"

    def _mask(self, ids, seed: int, step: int) -> Batch:
        """Mask a window of ids (the sampler's inputs; its shifted targets are not needed)."""
        g = torch.Generator().manual_seed(seed * 1_000_003 + step)
        inputs, labels = mlm_batch(ids, self.tokenizer, g)
        return Batch((inputs,), labels)

    def train_batch(self, batch_size):
        step = self.sampler.step
        x, _ = self.sampler.next_batch()
        return self._mask(x, self.cfg.seed, step)

    def val_batches(self, n, batch_size):
        if self._val is None:
            self._val = [self._mask(x, self.cfg.seed + 1, i) for i, (x, _) in
                         enumerate(eval_windows(self.val_tokens, self.cfg.seq_len, batch_size, n))]
        return self._val


class TextSeq2Seq(TextLM):
    """Encoder-decoder on plain text: the first half of a window is the source, the decoder
    continues it (BOS + second half, teacher forced)."""

    objective = "seq2seq"

    def _pair(self, x, y) -> Batch:
        window = torch.cat([x[:, :1], y], dim=1)
        half = window.size(1) // 2
        target = window[:, half:]
        bos = torch.full((window.size(0), 1), self.tokenizer.bos_id, dtype=torch.long)
        return Batch((window[:, :half], torch.cat([bos, target[:, :-1]], dim=1)), target)

    def train_batch(self, batch_size):
        return self._pair(*self.sampler.next_batch())

    def val_batches(self, n, batch_size):
        if self._val is None:
            self._val = [self._pair(x, y) for x, y in
                         eval_windows(self.val_tokens, self.cfg.seq_len, batch_size, n)]
        return self._val


class TaskLM(Pipeline):
    """Synthetic task as a causal LM: the loss is on the answer tokens and the newline that
    closes the answer (so a model that learned the task also stops there)."""

    objective = "causal-lm"
    reports_accuracy = True

    def __init__(self, task, cfg: TrainConfig, tokenizer):
        self.sampler = TaskSampler(task, tokenizer, cfg.batch_size, cfg.seed)
        self.tokenizer = tokenizer
        self._val = None

    @staticmethod
    def _convert(b) -> Batch:
        last = b.answer_mask & ~torch.roll(b.answer_mask, -1, dims=1)  # the answer's last token
        closing = torch.roll(last, 1, dims=1)                         # the newline after it
        labels = b.targets.masked_fill(~(b.answer_mask | closing), IGNORE)
        return Batch((b.inputs,), labels)

    def train_batch(self, batch_size):
        return self._convert(self.sampler.next_lm_batch())

    def val_batches(self, n, batch_size):
        if self._val is None:
            from ..data import task_lm_batch
            examples = self.sampler.eval_examples(n * batch_size)
            self._val = [self._convert(task_lm_batch(examples[i:i + batch_size], self.tokenizer))
                         for i in range(0, len(examples), batch_size)]
        return self._val


class TaskSeq2Seq(TaskLM):
    objective = "seq2seq"

    @staticmethod
    def _convert(b) -> Batch:
        return Batch((b.source, b.decoder_input), b.labels)

    def train_batch(self, batch_size):
        return self._convert(self.sampler.next_seq2seq_batch())

    def val_batches(self, n, batch_size):
        if self._val is None:
            from ..data import task_seq2seq_batch
            examples = self.sampler.eval_examples(n * batch_size)
            self._val = [self._convert(task_seq2seq_batch(examples[i:i + batch_size],
                                                          self.tokenizer))
                         for i in range(0, len(examples), batch_size)]
        return self._val


def build_pipeline(graph: Graph, cfg: TrainConfig, tokenizer=None, corpus=None) -> Pipeline:
    """The pipeline for ``graph``'s objective over ``cfg.corpus`` (tokenizer built unless given)."""
    objective = graph_objective(graph)
    corpus = corpus or load_corpus(cfg.corpus, errors=cfg.corpus_errors)
    if tokenizer is None:
        tokenizer = build_tokenizer(cfg.tokenizer, corpus)
    if corpus.task is not None and objective == "causal-lm":
        pipe: Pipeline = TaskLM(corpus.task, cfg, tokenizer)
    elif corpus.task is not None and objective == "seq2seq":
        pipe = TaskSeq2Seq(corpus.task, cfg, tokenizer)
    else:
        tokens = token_array(corpus, tokenizer)
        cls = {"causal-lm": TextLM, "masked-lm": TextMLM, "seq2seq": TextSeq2Seq}[objective]
        pipe = cls(tokens, cfg, tokenizer)
    pipe.tokenizer = tokenizer
    pipe.corpus = corpus
    return pipe
