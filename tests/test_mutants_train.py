"""Direct tests for behaviour of tfstudio/train that mutation testing (bench/mutation.py) found
unpinned: each asserts the documented result against numbers worked out in the test (a
stand-in model whose next token is known, counts done by hand)."""
import contextlib
import math
import time
from types import SimpleNamespace

import numpy as np

import pytest
import torch

from tfstudio.data.simple_tokenizers import ByteTokenizer
from tfstudio.train.generation import (StopText, _Window, context_window, fit_to_window,
                                       generate_ids, stream_text)


# ---------------------------------------------------------------- generation.py

class NextByte(torch.nn.Module):
    """A decoder whose call number i says "the next token is ``script[i]``" (the last entry
    from then on), and that records the tokens it was fed and whether it had a cache."""
    family = "decoder"

    def __init__(self, script: list[int], vocab: int = 260):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.script, self.vocab = script, vocab
        self.fed: list[list[int]] = []
        self.cached: list[bool] = []

    def new_cache(self):
        return SimpleNamespace(encoded=None)

    def forward(self, tokens, cache=None):
        self.fed.append(tokens[0].tolist())
        self.cached.append(cache is not None)
        logits = torch.zeros(1, tokens.shape[1], self.vocab)
        logits[0, -1, self.script[min(len(self.fed) - 1, len(self.script) - 1)]] = 10.0
        return logits


def test_context_window_prefers_the_trained_length_then_the_graph():
    model = SimpleNamespace(graph=SimpleNamespace(meta={"context_length": 64}))
    assert context_window(model, 32) == 32
    assert context_window(model) == 64
    assert context_window(SimpleNamespace(graph=SimpleNamespace(meta={}))) is None
    assert context_window(SimpleNamespace()) is None


@pytest.mark.parametrize("window, expected", [
    (4, [7, 8, 9, 10]), (10, list(range(1, 11))), (11, list(range(1, 11))),
    (None, list(range(1, 11))), (0, list(range(1, 11)))])
def test_fit_to_window_keeps_the_last_tokens(window, expected):
    assert fit_to_window(list(range(1, 11)), window) == expected


@pytest.mark.parametrize("size, pin_first, start", [
    (8, False, 3),   # keeps 8 - 8 // 4 = 6 of the 9 tokens
    (8, True, 4),    # 5 tokens after the pinned first one: 6 read again
    (2, False, 8),   # keeps 2 - 1 = 1 (a quarter of 2 rounds up to 1 token)
    (2, True, 8),    # never fewer than one token after the pinned one
])
def test_window_slides_to_three_quarters(size, pin_first, start):
    view = _Window(size, pin_first)
    assert not view.slide(size)          # exactly full: nothing moves
    assert view.slide(9) and view.start == start
    seq = torch.arange(9).view(1, 9)
    expected = ([0] if pin_first else []) + list(range(start, 9))
    assert view.tokens(seq)[0].tolist() == expected
    assert view._read(9) == len(expected)
    assert not view.slide(9)             # now it fits


def test_window_without_a_size_never_slides():
    view = _Window(None, False)
    assert not view.slide(10_000) and view.start == 0
    seq = torch.arange(5).view(1, 5)
    assert view.tokens(seq) is seq


@pytest.mark.parametrize("use_cache, lengths", [
    # window 4: the prompt's last 4; on overflow the last 3 (4 - 4 // 4) are read again, then
    # one cached token fits before the next rebuild; without a cache every step reads the window
    (True, [4] + [3, 1] * 10), (False, [4] + [3, 4] * 10)])
def test_generation_feeds_the_window_and_stops_at_a_stop_id(use_cache, lengths):
    script = list(range(10, 40))
    model = NextByte(script)
    prompt = [1, 2, 3, 4, 5, 6]
    out = list(generate_ids(model, prompt, max_new_tokens=20, top_k=1, window=4,
                            use_cache=use_cache, seed=0))
    assert out == script[:20]
    assert [len(f) for f in model.fed] == lengths
    assert all(model.cached) == use_cache
    full = prompt + out
    for call, fed in enumerate(model.fed):  # always the newest tokens known at that call
        assert fed == full[:len(prompt) + call][-len(fed):]
    stop = NextByte([42, 200, 43])
    assert list(generate_ids(stop, [1], top_k=1, stop_ids=[200], window=8)) == [42, 200]


def test_generation_restores_training_mode():
    model = NextByte([5])
    model.train()
    list(generate_ids(model, [1], max_new_tokens=3, top_k=1))
    assert model.training
    model.eval()
    list(generate_ids(model, [1], max_new_tokens=3, top_k=1))
    assert not model.training


def test_stop_text_holds_back_a_possible_stop_and_never_shows_it():
    stop = StopText(["END", ""])
    assert stop.feed("abcE") == ("abc", False)        # "E" may start "END"
    assert stop.feed("N") == ("", False)
    assert stop.feed("Dxyz") == ("", True)            # the stop itself is never shown
    two = StopText(["zz", "yy"])
    assert two.feed("a yy b zz") == ("a ", True)      # the earliest stop wins
    held = StopText(["END"])
    assert held.feed("xEN") == ("x", False)
    assert held.flush() == "EN" and held.flush() == ""
    assert StopText().feed("free") == ("free", False)
    twice = StopText(["END"])
    assert twice.feed("aENDbEND") == ("a", True)       # the first occurrence
    assert twice.flush() == ""                          # nothing is left over after a stop


def test_stream_text_waits_for_whole_characters_and_ends_at_eot():
    tok = ByteTokenizer()
    text = "é!"                                       # 2 bytes, then 1
    script = list(text.encode()) + [tok.eot_id, ord("x")]
    model = NextByte(script)
    pieces = list(stream_text(model, tok, [ord("a")], top_k=1, max_new_tokens=10, window=64))
    assert pieces == ["é", "!"]
    stopped = list(stream_text(NextByte(list(b"abSTOPcd")), tok, [1], stops=["STOP"],
                               top_k=1, max_new_tokens=20, window=64))
    assert "".join(stopped) == "ab"
    tail = list(stream_text(NextByte(list(b"abS")), tok, [1], stops=["STOP"], top_k=1,
                            max_new_tokens=3, window=64))
    assert "".join(tail) == "abS"                     # held back, then flushed at the end
    ended = list(stream_text(NextByte(list(b"abS") + [tok.eot_id]), tok, [1], stops=["STOP"],
                             top_k=1, max_new_tokens=10, window=64))
    assert "".join(ended) == "abS"                    # also when the text ends with eot


# ---------------------------------------------------------------- pipeline.py, objectives.py

from tfstudio.data import DataError, TaskSampler, load_corpus  # noqa: E402
from tfstudio.data.masking import IGNORE_INDEX  # noqa: E402
from tfstudio.data.simple_tokenizers import CharTokenizer  # noqa: E402
from tfstudio.runs.config import TrainConfig  # noqa: E402
from tfstudio.train.objectives import Batch, loss_and_logits, token_accuracy  # noqa: E402
from tfstudio.train.pipeline import TaskLM, TaskSeq2Seq, TextLM, TextMLM, TextSeq2Seq  # noqa: E402


def test_task_lm_labels_are_the_answer_and_its_closing_newline():
    corpus = load_corpus("task:copy")
    tok = CharTokenizer(corpus.task.alphabet)
    cfg = TrainConfig(corpus="task:copy", batch_size=4, seed=3)
    batch = TaskLM(corpus.task, cfg, tok).train_batch(4)
    examples = TaskSampler(corpus.task, tok, 4, seed=3).next_examples()
    for row, ex in enumerate(examples):
        text = ex.source + ">" + ex.target + "\n"
        ids = tok.encode(text)
        start = len(ex.source) + 1            # the answer's first character in text
        expected = [IGNORE_INDEX] * (batch.labels.shape[1])
        for p in range(start - 1, len(text) - 1):  # predicting the answer, then "\n"
            expected[p] = ids[p + 1]
        assert batch.labels[row].tolist() == expected
        assert batch.inputs[0][row, :len(ids) - 1].tolist() == ids[:-1]


def test_task_pipelines_validate_on_a_fixed_set_of_the_requested_size():
    corpus = load_corpus("task:copy")
    tok = CharTokenizer(corpus.task.alphabet)
    cfg = TrainConfig(corpus="task:copy", batch_size=4)
    pipe = TaskLM(corpus.task, cfg, tok)
    val = pipe.val_batches(3, 4)
    assert [len(b.labels) for b in val] == [4, 4, 4]
    assert pipe.val_batches(3, 4) is val and pipe.reports_accuracy
    s2s = TaskSeq2Seq(corpus.task, cfg, tok)
    batches = s2s.val_batches(2, 5)
    assert [len(b.labels) for b in batches] == [5, 5]
    source, decoder = batches[0].inputs
    assert (decoder[:, 0] == tok.bos_id).all()
    train = s2s.train_batch(4)
    assert len(train.inputs) == 2 and train.labels.shape[0] == 4


def _text_cfg(**kw):
    return TrainConfig(**{"seq_len": 8, "batch_size": 2, "seed": 0, "val_fraction": 0.25, **kw})


def test_text_seq2seq_splits_each_window_in_half():
    tokens = np.arange(400) % 250
    pipe = TextSeq2Seq(tokens, _text_cfg(), ByteTokenizer())
    start = int(pipe.sampler.starts(0)[0])
    batch = pipe.train_batch(2)
    source, decoder = batch.inputs
    window = [t % 250 for t in range(start, start + 9)]  # seq_len + 1: 4 source, 5 target
    assert source[0].tolist() == window[:4]
    assert batch.labels[0].tolist() == window[4:]
    assert decoder[0].tolist() == [ByteTokenizer().bos_id] + window[4:8]


def test_text_lm_validation_is_the_tail_and_too_short_a_tail_is_refused():
    tokens = np.arange(400) % 250
    pipe = TextLM(tokens, _text_cfg(), ByteTokenizer())
    assert len(pipe.val_tokens) == 100 and pipe.val_tokens[0] == 300 % 250
    val = pipe.val_batches(2, 2)
    assert len(val) == 2 and pipe.val_batches(2, 2) is val
    assert not pipe.reports_accuracy
    with pytest.raises(DataError, match=r"\(8 tokens, the last 10%\) is shorter than one window "
                                        r"of 9 tokens; use a larger corpus"):
        TextLM(np.arange(80), _text_cfg(val_fraction=0.1), ByteTokenizer())


def test_text_mlm_masks_reproducibly_and_labels_only_masked_positions():
    tokens = np.arange(4000) % 250
    cfg = _text_cfg(seq_len=64, batch_size=8)
    a, b = TextMLM(tokens, cfg, ByteTokenizer()), TextMLM(tokens, cfg, ByteTokenizer())
    first, again = a.train_batch(8), b.train_batch(8)
    assert torch.equal(first.inputs[0], again.inputs[0])
    assert torch.equal(first.labels, again.labels)
    assert not torch.equal(a.train_batch(8).labels, first.labels)   # a new draw per step
    x, _ = TextMLM(tokens, cfg, ByteTokenizer()).sampler.next_batch()
    labelled = first.labels != IGNORE_INDEX
    assert torch.equal(first.labels[labelled], x[labelled])
    assert 0.05 < labelled.float().mean() < 0.3                       # about 15%
    val = a.val_batches(2, 8)
    assert a.val_batches(2, 8) is val
    assert len(val) == 2 and val[0].inputs[0].shape == (8, 64)
    assert not torch.equal(val[0].labels, first.labels)


class _Fixed(torch.nn.Module):
    def __init__(self, logits):
        super().__init__()
        self.logits = logits

    def forward(self, *inputs):
        return self.logits


def test_loss_is_the_mean_over_labelled_positions_only():
    logits = torch.tensor([[[2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0]]])
    labels = torch.tensor([[0, IGNORE_INDEX, 1]])
    loss, out = loss_and_logits(_Fixed(logits), Batch((torch.zeros(1, 3),), labels))
    lse = lambda row: torch.logsumexp(row, 0)  # noqa: E731
    expected = ((lse(logits[0, 0]) - 2.0) + (lse(logits[0, 2]) - 0.0)) / 2
    assert torch.allclose(loss, expected) and out is logits
    none = torch.full((1, 3), IGNORE_INDEX)
    zero, _ = loss_and_logits(_Fixed(logits), Batch((torch.zeros(1, 3),), none))
    assert float(zero) == 0.0
    assert token_accuracy(logits, labels) == (1, 2)   # position 0 right, position 2 wrong


def test_batch_rows_device_and_token_count():
    batch = Batch((torch.arange(12).view(4, 3), torch.arange(8).view(4, 2)),
                  torch.arange(12).view(4, 3))
    part = batch.rows(1, 3)
    assert part.inputs[0].tolist() == [[3, 4, 5], [6, 7, 8]]
    assert part.inputs[1].tolist() == [[2, 3], [4, 5]]
    assert part.labels.tolist() == [[3, 4, 5], [6, 7, 8]] and part.tokens == 6
    moved = batch.to("cpu")
    assert len(moved.inputs) == 2 and torch.equal(moved.labels, batch.labels)


# ---------------------------------------------------------------- trainer.py

import tfstudio  # noqa: E402
from tfstudio.train.events import RouterMetrics, StepMetrics  # noqa: E402
from tfstudio.train.distributed import DistInfo  # noqa: E402
from tfstudio.train.trainer import Trainer  # noqa: E402

TINY = dict(corpus="sample:small", tokenizer="byte", batch_size=2, seq_len=16,
            warmup_steps=0, eval_every=0)


def _trainer(**cfg):
    events = []
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**{**TINY, **cfg}),
                      listeners=[events.append])
    return trainer, events


def test_the_divergence_message_names_the_checkpoint_that_exists():
    trainer, _ = _trainer(lr=0.5)
    trainer.state.step = 6
    assert trainer._diverged("the loss became nan") == (
        "the loss became nan at step 7. Training stopped; no checkpoint was written yet "
        "(--checkpoint-every N keeps one every N steps). Lower the learning rate (now 0.5), "
        "keep gradient clipping on, or use fp32")
    trainer.state.saved_step = 4
    assert "Training stopped; the checkpoint of step 4 is kept. Lower" in \
        trainer._diverged("the loss became nan")


def test_step_metrics_report_tokens_per_second_and_model_flops_utilisation():
    trainer, events = _trainer()
    trainer.model = SimpleNamespace(blocks=lambda: [])
    trainer._flops_per_token, trainer._peak = 6.0, 1000.0
    trainer.state.step, trainer.state.tokens_seen, trainer.state.grad_norm = 3, 96, 0.5
    trainer.state.layer_norms = {"embed": 0.25}
    clock = time.perf_counter()
    trainer._emit_step(2.5, 0.01, 64, 0.5, clock)
    (m,) = events
    assert 0.0 <= m.elapsed_s < 60.0                   # seconds since the run's clock started
    assert m.layer_grad_norms == {"embed": 0.25}
    assert m.layer_grad_norms is not trainer.state.layer_norms   # a copy: later steps change it
    assert isinstance(m, StepMetrics) and m.step == 3 and m.tokens_seen == 96
    assert m.tokens_per_s == 128.0                     # 64 tokens in 0.5 s
    assert m.mfu == pytest.approx(6.0 * 128.0 / 1000.0)
    assert (m.loss, m.lr, m.grad_norm) == (2.5, 0.01, 0.5)
    trainer._emit_step(2.5, 0.01, 64, 2.0, 0.0)        # slower than a second: still counted
    assert events[-1].tokens_per_s == 32.0
    trainer._emit_step(2.5, 0.01, 64, 0.0, 0.0)        # no time measured: 0, not a division
    assert events[-1].tokens_per_s == 0.0 and events[-1].mfu == 0.0
    trainer.dist = DistInfo(world_size=2)              # tokens/s of all ranks, peak of one
    trainer._emit_step(2.5, 0.01, 64, 0.5, 0.0)
    assert events[-1].mfu == pytest.approx(6.0 * 128.0 / (1000.0 * 2))
    trainer.dist = DistInfo()
    trainer._peak = None                               # unknown peak (CPUs): no MFU
    trainer._emit_step(2.5, 0.01, 64, 0.5, 0.0)
    assert events[-1].mfu is None


def test_router_loads_are_reported_with_the_step_and_balance_loss():
    trainer, events = _trainer()
    moe = SimpleNamespace(last_expert_load=torch.tensor([0.75, 0.25]))
    trainer.model = SimpleNamespace(blocks=lambda: [(("layers", 0, "moe"), moe),
                                                    (("embed",), SimpleNamespace())])
    trainer._peak = None
    trainer.state.step, trainer.state.aux_loss = 5, 0.125
    trainer._emit_step(1.0, 0.1, 8, 0.1, 0.0)
    router = events[-1]
    assert isinstance(router, RouterMetrics) and router.step == 5
    assert router.expert_load == {"layers.0.moe": [0.75, 0.25]} and router.aux_loss == 0.125


def _eval_trainer(batches, reports_accuracy):
    trainer, events = _trainer(eval_batches=3)
    trainer.device, trainer.precision = torch.device("cpu"), "fp32"
    asked = []

    def val_batches(n, batch_size):
        asked.append((n, batch_size))
        return batches
    trainer.pipeline = SimpleNamespace(val_batches=val_batches,
                                       reports_accuracy=reports_accuracy)
    return trainer, events, asked


def test_evaluation_averages_the_batch_losses_and_counts_accuracy_over_labels():
    logits = torch.tensor([[[3.0, 0.0], [0.0, 3.0]]])
    model = _Fixed(logits)
    good = Batch((torch.zeros(1, 2),), torch.tensor([[0, 1]]))            # both right
    half = Batch((torch.zeros(1, 2),), torch.tensor([[1, IGNORE_INDEX]]))  # one wrong label
    trainer, events, asked = _eval_trainer([good, half], reports_accuracy=True)
    trainer.model = model
    model.train()
    trainer.state.step = 9
    trainer._evaluate()
    lse = float(torch.logsumexp(torch.tensor([3.0, 0.0]), 0))
    losses = [lse - 3.0, lse - 0.0]                     # mean over each batch's labels
    (ev,) = events
    assert ev.step == 9 and asked == [(3, 2)]
    assert ev.val_loss == pytest.approx(sum(losses) / 2)
    assert ev.perplexity == pytest.approx(math.exp(sum(losses) / 2))
    assert ev.accuracy == pytest.approx(2 / 3)          # 2 of the 3 labelled positions
    assert model.training                               # back to training mode


def test_evaluation_without_accuracy_and_with_huge_or_no_losses():
    logits = torch.tensor([[[200.0, 0.0]]])
    wrong = Batch((torch.zeros(1, 1),), torch.tensor([[1]]))
    trainer, events, _ = _eval_trainer([wrong], reports_accuracy=False)
    trainer.model = _Fixed(logits)
    trainer._evaluate()
    assert events[-1].accuracy is None and events[-1].val_loss == pytest.approx(200.0)
    assert events[-1].perplexity == pytest.approx(math.exp(50.0))   # capped, not inf
    nothing, quiet, _ = _eval_trainer([], reports_accuracy=True)
    nothing.model = _Fixed(logits)
    nothing._evaluate()
    assert quiet == []


def test_out_of_memory_message_names_what_to_reduce():
    trainer, _ = _trainer(batch_size=4, seq_len=32)
    trainer.device, trainer.state.step = torch.device("cpu"), 2
    assert trainer._oom_message() == (
        "out of memory on cpu at step 3. Reduce the batch size (now 4; keep the effective "
        "batch with grad_accum), the sequence length (now 32) or the model's width/depth; on "
        "a GPU, bf16 halves activation memory")


def test_a_run_logs_evaluates_probes_and_checkpoints_on_schedule(tmp_path):
    from tfstudio.train.events import CheckpointSaved, EvalMetrics, Finished, Probe
    from tfstudio.train.optim import lr_at
    events = []
    cfg = TrainConfig(**{**TINY, "steps": 5, "log_every": 2, "eval_every": 3, "eval_batches": 1,
                         "probe_every": 4, "checkpoint_every": 2, "lr": 0.01,
                         "warmup_steps": 2, "keep_checkpoints": 5})
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), cfg, run_dir=tmp_path / "run",
                      listeners=[events.append])
    end = trainer.run()
    assert isinstance(end, Finished) and end.reason == "completed" and end.step == 5
    steps = [e for e in events if isinstance(e, StepMetrics)]
    assert [e.step for e in steps] == [2, 4, 5]                  # every 2nd and the last
    assert [e.tokens_seen for e in steps] == [2 * 32, 4 * 32, 5 * 32]   # batch 2 x 16 tokens
    for e in steps:  # one step's 32 tokens took less than the whole run so far
        assert e.tokens_per_s * e.elapsed_s > 32
    for e in steps:  # the rate the step was taken with (schedule counted from step 0)
        assert e.lr == pytest.approx(lr_at(e.step - 1, lr=0.01, warmup=2, total=5,
                                           min_ratio=cfg.min_lr_ratio))
    assert [e.step for e in events if isinstance(e, EvalMetrics)] == [3, 5]
    assert [e.step for e in events if isinstance(e, Probe)] == [0, 4]
    assert [e.step for e in events if isinstance(e, CheckpointSaved)] == [2, 4, 5]
    assert end.final_loss == pytest.approx(steps[-1].loss)
    last_lr = lr_at(4, lr=0.01, warmup=2, total=5, min_ratio=cfg.min_lr_ratio)
    assert [g["lr"] for g in trainer.optimizer.param_groups] == \
        pytest.approx([last_lr] * len(trainer.optimizer.param_groups))   # what AdamW stepped with


def test_stopping_from_a_listener_ends_after_that_step_with_its_loss(tmp_path):
    from tfstudio.train.events import CheckpointSaved, Finished, Probe
    events = []

    def listener(event):
        events.append(event)
        if isinstance(event, StepMetrics) and event.step == 2:
            trainer.stop()
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**{**TINY, "steps": 50}),
                      run_dir=tmp_path / "run", listeners=[listener])
    end = trainer.run()
    assert isinstance(end, Finished) and (end.reason, end.step) == ("stopped", 2)
    steps = [e for e in events if isinstance(e, StepMetrics)]
    assert [e.step for e in steps] == [1, 2] and end.final_loss == pytest.approx(steps[-1].loss)
    assert [e.step for e in events if isinstance(e, CheckpointSaved)] == [2]
    assert not [e for e in events if isinstance(e, Probe)]       # probe_every 0: never


def test_a_run_stopped_before_its_first_step_has_no_loss():
    trainer, events = _trainer(steps=5)
    trainer.stop()
    end = trainer.run()
    assert (end.reason, end.step, end.final_loss) == ("stopped", 0, None)
    assert not [e for e in events if isinstance(e, StepMetrics)]


def test_layer_groups_are_named_by_their_first_two_keys_and_the_rest_is_other():
    from tfstudio.train.trainer import _layer_parameter_groups
    embed, attn, mlp, head = (torch.nn.Linear(2, 2) for _ in range(4))
    stray = torch.nn.Parameter(torch.zeros(3))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.parts = torch.nn.ModuleList([embed, attn, mlp, head])
            self.stray = stray

        def blocks(self):
            return [(("embed",), embed), (("layers", 0, "attn"), attn),
                    (("layers", 0, "mlp"), mlp), (("head",), head), (("tied",), head)]

    groups = _layer_parameter_groups(Model())
    ids = {name: [id(p) for p in ps] for name, ps in groups.items()}
    assert ids == {"embed": [id(embed.weight), id(embed.bias)],
                   "layers.0": [id(p) for p in (attn.weight, attn.bias, mlp.weight, mlp.bias)],
                   "head": [id(head.weight), id(head.bias)],   # a shared module counted once
                   "other": [id(stray)]}


def _clip_trainer(clip):
    trainer, _ = _trainer(grad_clip=clip)
    params = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2)),
              torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))]
    for p, g in zip(params, ([3.0, 0.0], [0.0, 4.0], [12.0], None)):
        p.grad = None if g is None else torch.tensor(g)
    holder = torch.nn.Module()
    holder.ps = torch.nn.ParameterList(params)
    trainer.model, trainer.device = holder, torch.device("cpu")
    trainer._layer_params = {"a": params[:2], "b": params[2:3], "frozen": params[3:]}
    return trainer, params


@pytest.mark.parametrize("log", [True, False])
def test_clipping_scales_every_gradient_to_the_limit_logged_or_not(log):
    trainer, params = _clip_trainer(clip=1.0)
    trainer.state.layer_norms = {"before": 1.0}
    trainer._measure_and_clip(log=log)
    assert trainer.state.grad_norm == pytest.approx(13.0)   # sqrt(3² + 4² + 12²), before clipping
    scale = 1.0 / 13.0
    assert params[0].grad.tolist() == pytest.approx([3 * scale, 0.0], rel=1e-5)
    assert params[2].grad.tolist() == pytest.approx([12 * scale], rel=1e-5)
    assert params[3].grad is None
    if log:   # per layer: 5, 12, and 0 for a layer without gradients
        assert trainer.state.layer_norms == pytest.approx({"a": 5.0, "b": 12.0, "frozen": 0.0})
    else:
        assert trainer.state.layer_norms == {"before": 1.0}


@pytest.mark.parametrize("log", [True, False])
def test_clipping_off_measures_but_leaves_the_gradients(log):
    trainer, params = _clip_trainer(clip=0.0)
    trainer._measure_and_clip(log=log)
    assert trainer.state.grad_norm == pytest.approx(13.0)
    assert params[0].grad.tolist() == [3.0, 0.0] and params[2].grad.tolist() == [12.0]


# one training step, with stand-ins whose gradients are worked out by autograd in the test

class TwoWeights(torch.nn.Module):
    """logits = (w1 * x, w2 * x) per position; w2 takes part only in rows whose flag is set
    (so a step can leave it without a gradient); aux = 0.5 * w1²."""

    def __init__(self):
        super().__init__()
        self.w1, self.w2 = torch.nn.Parameter(torch.tensor(0.3)), torch.nn.Parameter(
            torch.tensor(-0.2))
        self.rows_seen: list[int] = []

    def forward(self, x, flag):
        self.rows_seen.append(x.shape[0])
        second = torch.where(flag[:, None], self.w2 * x, torch.zeros_like(x)) if flag.any() \
            else torch.zeros_like(x)
        return torch.stack([self.w1 * x, second], dim=-1)

    def aux_loss(self):
        return 0.5 * self.w1 ** 2


class Synced(torch.nn.Module):
    """A DDP stand-in: records on which micro-batches the gradient sync was skipped."""

    def __init__(self, inner):
        super().__init__()
        self.inner, self.skipped, self.calls = inner, [], 0

    def forward(self, *inputs):
        self.calls += 1
        return self.inner(*inputs)

    @contextlib.contextmanager
    def no_sync(self):
        self.skipped.append(self.calls)
        yield


def _micro_batches(n, flags):
    g = torch.Generator().manual_seed(0)
    return [Batch((torch.randn(4, 3, generator=g), torch.tensor(flags[i])),
                  torch.randint(0, 2, (4, 3), generator=g)) for i in range(n)]


def _step_trainer(model, batches, *, momentum=0.0, **cfg):
    trainer, _ = _trainer(grad_clip=0.0, batch_size=4, **cfg)
    asked = []

    def train_batch(n):
        asked.append(n)
        return batches[len(asked) - 1]
    trainer.pipeline = SimpleNamespace(train_batch=train_batch)
    trainer.model = trainer.train_model = model
    trainer.device, trainer.precision = torch.device("cpu"), "fp32"
    trainer.optimizer = torch.optim.SGD(model.parameters(), lr=1.0, momentum=momentum)
    trainer.scaler = torch.amp.GradScaler("cpu", enabled=False)
    trainer._layer_params = {"all": list(model.parameters())}
    return trainer, asked


def _expected(batches, rows=slice(None)):
    """Loss, aux and gradients of the mean over micro-batches, by autograd on a fresh model."""
    ref = TwoWeights()
    losses, auxes, total = [], [], 0.0
    for b in batches:
        x, flag = b.inputs[0][rows], b.inputs[1][rows]
        logits = ref(x, flag)
        ce = torch.nn.functional.cross_entropy(logits.reshape(-1, 2), b.labels[rows].reshape(-1))
        losses.append(float(ce.detach()))
        auxes.append(float(ref.aux_loss().detach()))
        total = total + (ce + ref.aux_loss()) / len(batches)
    total.backward()
    return (sum(losses) / len(losses), sum(auxes) / len(auxes),
            float(ref.w1.grad), float(ref.w2.grad))


def test_gradient_accumulation_averages_micro_batches():
    batches = _micro_batches(3, [[True] * 4] * 3)
    model = TwoWeights()
    trainer, asked = _step_trainer(model, batches, grad_accum=3)
    loss, tokens = trainer._train_step()
    exp_loss, exp_aux, g1, g2 = _expected(batches)
    assert asked == [4, 4, 4] and tokens == 3 * 12
    assert loss == pytest.approx(exp_loss, rel=1e-6)
    assert trainer.state.aux_loss == pytest.approx(exp_aux, rel=1e-6)
    # SGD with lr 1: the step moved each weight by its gradient
    assert 0.3 - float(model.w1.detach()) == pytest.approx(g1, rel=1e-5)
    assert -0.2 - float(model.w2.detach()) == pytest.approx(g2, rel=1e-5)


def test_a_weight_without_a_gradient_this_step_is_left_alone():
    batches = _micro_batches(2, [[True] * 4, [False] * 4])
    model = TwoWeights()
    trainer, _ = _step_trainer(model, batches, momentum=0.9)
    trainer._train_step()
    after_first = float(model.w2.detach())
    trainer._train_step()     # w2 is not used: its gradient is None, so SGD skips it
    assert float(model.w2.detach()) == after_first and model.w2.grad is None


def test_data_parallel_steps_take_this_ranks_rows_and_sync_only_the_last_micro_batch(
        monkeypatch):
    import tfstudio.train.trainer as trainer_module
    devices = []
    monkeypatch.setattr(trainer_module, "all_ranks_agree",
                        lambda ok, info, device: devices.append(device) or ok)
    monkeypatch.setattr(trainer_module, "mean_across_ranks", lambda value, info, device: value)
    batches = _micro_batches(3, [[True] * 4] * 3)
    inner = TwoWeights()
    trainer, asked = _step_trainer(inner, batches, grad_accum=3)
    trainer.train_model = Synced(inner)
    trainer.dist = DistInfo(rank=1, world_size=2)
    loss, tokens = trainer._train_step()
    assert asked == [4, 4, 4]                       # the global batch is drawn on every rank
    assert inner.rows_seen == [2, 2, 2]             # rank 1 of 2 keeps rows 2 and 3
    assert trainer.train_model.skipped == [0, 1]    # no all-reduce before the last micro-batch
    assert tokens == 3 * 6 * 2                      # counted over both ranks
    assert devices == [torch.device("cpu")] * 3
    exp_loss, _, g1, _ = _expected(batches, rows=slice(2, 4))
    assert loss == pytest.approx(exp_loss, rel=1e-6)
    assert 0.3 - float(inner.w1.detach()) == pytest.approx(g1, rel=1e-5)


def test_a_nan_loss_stops_the_step_with_the_value_and_the_step():
    from tfstudio.train.trainer import NonFiniteLoss
    batches = _micro_batches(1, [[True] * 4])
    batches[0].inputs[0][0, 0] = float("nan")
    trainer, _ = _step_trainer(TwoWeights(), batches)
    with pytest.raises(NonFiniteLoss, match=r"^the loss became nan at step 1\. Training stopped; "
                                            r"no checkpoint was written yet"):
        trainer._train_step()


def test_fp32_steps_run_without_autocast():
    class Linear(TwoWeights):
        def __init__(self):
            super().__init__()
            self.proj, self.dtypes = torch.nn.Linear(3, 3), []

        def forward(self, x, flag):
            y = self.proj(x)
            self.dtypes.append(y.dtype)   # autocast (bf16/fp16) would lower the matmul
            return super().forward(y, flag)
    model = Linear()
    trainer, _ = _step_trainer(model, _micro_batches(1, [[True] * 4]))
    trainer._train_step()
    assert model.dtypes == [torch.float32]


@pytest.mark.parametrize("preset, corpus, tokenizer, kind", [
    ("tiny-gpt", "task:copy", "char", TaskLM), ("tiny-t5", "task:copy", "char", TaskSeq2Seq),
    ("tiny-gpt", "sample:small", "char", TextLM), ("tiny-bert", "sample:small", "byte", TextMLM),
    ("tiny-t5", "sample:small", "byte", TextSeq2Seq)])
def test_the_pipeline_follows_the_head_and_the_corpus(preset, corpus, tokenizer, kind, tmp_path,
                                                     monkeypatch):
    from tfstudio.train.pipeline import build_pipeline
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path))
    cfg = TrainConfig(corpus=corpus, tokenizer=tokenizer, seq_len=16, batch_size=2)
    pipe = build_pipeline(tfstudio.load_graph(preset), cfg)
    assert type(pipe) is kind and pipe.corpus.spec == corpus
    assert pipe.tokenizer.kind == tokenizer
    if tokenizer == "char":   # built from the corpus: exactly its characters
        text = pipe.corpus.text()
        assert set(pipe.tokenizer.alphabet) == set(text)
    batch = pipe.train_batch(2)
    assert batch.labels.shape[0] == 2


class EncDec(NextByte):
    """An encoder-decoder stand-in: records the source of every call and whether the cache it
    got already held the encoder output."""
    family = "encoder-decoder"

    def __init__(self, script):
        super().__init__(script)
        self.sources, self.had_encoded = [], []

    def forward(self, source, tokens, cache=None):
        self.sources.append(source[0].tolist())
        if cache is not None:
            self.had_encoded.append(cache.encoded is not None)
            cache.encoded = "encoded"
        return super().forward(tokens, cache)


def test_an_encoder_decoder_keeps_its_source_and_pinned_first_token_when_sliding():
    script = list(range(10, 30))
    model = EncDec(script)
    out = list(generate_ids(model, [1], source_ids=[5, 6, 7], max_new_tokens=10, top_k=1,
                            window=4))
    assert out == script[:10]
    # window 4 with the first token pinned: 1 + 2 tokens after each rebuild, then one fits
    assert [len(f) for f in model.fed] == [1, 1, 1, 1, 3, 1, 3, 1, 3, 1, 3]
    full = [1] + out
    for call, fed in enumerate(model.fed):
        known = full[:1 + call]
        if len(fed) == 3:
            assert fed == [1] + known[-2:]
    assert all(src == [5, 6, 7] for src in model.sources)
    assert model.had_encoded == [False] + [True] * 10   # rebuilt caches keep the encoding


def test_an_encoder_decoder_without_a_cache_reads_its_source_every_step():
    model = EncDec(list(range(10, 30)))
    out = list(generate_ids(model, [1], source_ids=[5, 6, 7], max_new_tokens=6, top_k=1,
                            window=4, use_cache=False))
    assert out == list(range(10, 16)) and len(model.sources) == 7
    assert all(src == [5, 6, 7] for src in model.sources) and model.had_encoded == []


def test_a_graph_needs_exactly_one_kind_of_head():
    from tfstudio.train.pipeline import graph_objective

    def graph(*types):
        return SimpleNamespace(walk=lambda: [((i,), SimpleNamespace(type=t))
                                             for i, t in enumerate(types)])
    assert graph_objective(graph("embedding", "mlm_head")) == "masked-lm"
    message = ("the graph needs exactly one kind of output head (LM, masked-LM or seq2seq) to be "
               "trained; it has ")
    with pytest.raises(ValueError) as none:
        graph_objective(graph("embedding"))
    assert str(none.value) == message + "none"
    with pytest.raises(ValueError) as two:
        graph_objective(graph("mlm_head", "lm_head", "lm_head"))
    assert str(two.value) == message + "['lm_head', 'mlm_head']"


def test_fitting_the_vocabulary_leaves_the_original_graph_alone():
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    graph = tfstudio.load_graph("tiny-gpt")
    before = {k: dict(n.params) for k, n in graph.walk()}
    fitted = fit_graph_to_tokenizer(graph, SimpleNamespace(vocab_size=77))
    assert {k: dict(n.params) for k, n in graph.walk()} == before
    sizes = [n.params["vocab_size"] for _, n in fitted.walk() if "vocab_size" in n.params]
    assert sizes and set(sizes) == {77}


def test_text_lm_takes_a_tail_of_exactly_one_window_and_the_configured_seed():
    pipe = TextLM(np.arange(90), _text_cfg(val_fraction=0.1, seed=5), ByteTokenizer())
    assert len(pipe.val_tokens) == 9                    # seq_len + 1: just enough
    assert pipe.sampler.state_dict()["seed"] == 5


def test_text_mlm_validation_takes_the_requested_number_of_batches():
    tokens = np.arange(4000) % 250
    pipe = TextMLM(tokens, _text_cfg(seq_len=64, batch_size=8), ByteTokenizer())
    assert len(pipe.val_batches(1, 8)) == 1


def test_the_pipeline_reads_the_corpus_with_the_configured_error_mode(tmp_path, monkeypatch):
    from tfstudio.train.pipeline import build_pipeline
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "bad.txt"
    path.write_bytes(b"some text " * 40 + b"\xff" + b" more text" * 40)
    cfg = TrainConfig(corpus=str(path), corpus_errors="replace", seq_len=8, batch_size=2)
    pipe = build_pipeline(tfstudio.load_graph("tiny-gpt"), cfg)
    assert "\ufffd" in pipe.corpus.text()


# ---------------------------------------------------------------- events.py

def test_an_event_is_a_dict_with_its_kind_and_comes_back_from_it():
    from tfstudio.train.events import EVENT_TYPES, Failed, event_from_dict
    event = StepMetrics(4, 2.5, 0.01, 1.5, {"embed": 0.5}, 100.0, 2.0, 64)
    data = event.to_dict()
    assert data == {"kind": "StepMetrics", "step": 4, "loss": 2.5, "lr": 0.01, "grad_norm": 1.5,
                    "layer_grad_norms": {"embed": 0.5}, "tokens_per_s": 100.0,
                    "elapsed_s": 2.0, "tokens_seen": 64, "mfu": None}
    assert event_from_dict(data) == event
    assert data["kind"] == "StepMetrics"            # the caller's dict is left as it was
    assert Failed(3, "nan", "m").kind == "Failed"
    assert sorted(EVENT_TYPES) == sorted(["Started", "StepMetrics", "EvalMetrics",
                                          "RouterMetrics", "Probe", "CheckpointSaved",
                                          "Finished", "Failed"])
    assert all(EVENT_TYPES[name].__name__ == name for name in EVENT_TYPES)


def test_the_metrics_log_appends_one_json_line_per_event_but_no_probes(tmp_path):
    import json
    from tfstudio.train.events import Finished, MetricsLog, Probe
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"kind": "Started"}\n', encoding="utf-8")    # earlier lines are kept
    log = MetricsLog(str(path))
    log(StepMetrics(1, float("nan"), 0.1, 1.0, {}, 1.0, 1.0, 8))   # NaN is written, not refused
    log(Probe(1, {"big": [1, 2, 3]}))
    log(Finished(1, "completed", 2.0))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and lines[0] == '{"kind": "Started"}'
    assert '"loss": NaN' in lines[1]
    assert json.loads(lines[2]) == {"kind": "Finished", "step": 1, "reason": "completed",
                                    "final_loss": 2.0, "elapsed_s": 0.0, "note": ""}


def test_truncating_keeps_what_came_up_to_the_checkpoint_and_no_ends(tmp_path):
    import json
    from tfstudio.train.events import CheckpointSaved, Failed, Finished, MetricsLog
    path = tmp_path / "metrics.jsonl"
    log = MetricsLog(path)
    for step in (1, 2, 3):
        log(StepMetrics(step, 1.0 / step, 0.1, 1.0, {}, 1.0, 1.0, 8 * step))
    log(CheckpointSaved(2, "ckpt"))
    log(Finished(2, "stopped"))
    log(Failed(1, "error", "x"))
    with open(path, "ab") as f:   # a hand-written line without a step, a torn line, bad bytes
        f.write(b'{"kind": "Started", "total_steps": 3}\n{"kind": "StepMe\n\xff\xfe\n')
    log.truncate_after(2)
    kept = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(d["kind"], d.get("step")) for d in kept] == [
        ("StepMetrics", 1), ("StepMetrics", 2), ("CheckpointSaved", 2), ("Started", None)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.jsonl"]   # no temporary left
    log.truncate_after(0)
    assert [json.loads(line)["kind"] for line in path.read_text().splitlines()] == ["Started"]


def test_reading_events_skips_lines_that_are_no_event(tmp_path):
    from tfstudio.train.events import CheckpointSaved, read_events
    path = tmp_path / "metrics.jsonl"
    assert read_events(path) == []                                       # no file yet
    path.write_bytes(b'{"kind": "CheckpointSaved", "step": 2, "path": "p"}\n'
                     b'[1, 2]\n'                                          # not an object
                     b'{"kind": "Nothing", "step": 1}\n'                  # no such event
                     b'{"step": 1}\n'                                     # no kind
                     b'{"kind": "CheckpointSaved", "step": 3, "oops": 1}\n'   # wrong fields
                     b'\xff\n{"kind": "CheckpointSaved", "step": 4, "path": "q"}')
    assert read_events(path) == [CheckpointSaved(2, "p"), CheckpointSaved(4, "q")]


# ---------------------------------------------------------------- trainer.py: whole runs

def _run(tmp_path=None, *, name="run", graph="tiny-gpt", listeners=(), **kw):
    """A short run of the tiny preset (into tmp_path/name when given): (trainer, end, events)."""
    events = []
    options = {key: kw.pop(key) for key in ("resume", "overwrite", "tokenizer", "corpus")
               if key in kw}
    trainer = Trainer(tfstudio.load_graph(graph), TrainConfig(**{**TINY, "log_every": 1, **kw}),
                      run_dir=None if tmp_path is None else tmp_path / name,
                      listeners=[events.append, *listeners], **options)
    end = trainer.run()
    return trainer, end, events


def test_a_run_starts_by_saying_what_it_trains_and_keeps_it_all_in_its_folder(tmp_path):
    from tfstudio.compiler import compile_graph
    from tfstudio.runs.checkpoint import read_state
    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.events import CheckpointSaved, Finished, Started, read_events
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    began = time.perf_counter()
    trainer, end, events = _run(tmp_path, steps=3, checkpoint_every=1, keep_checkpoints=1)
    wall = time.perf_counter() - began
    started = events[0]
    byte_model = compile_graph(fit_graph_to_tokenizer(tfstudio.load_graph("tiny-gpt"),
                                                      ByteTokenizer()))
    assert started == Started(0, 3, sum(p.numel() for p in byte_model.parameters()), "cpu",
                              "fp32", "causal-lm", "tiny-gpt", [])
    assert isinstance(end, Finished) and (end.step, end.reason) == (3, "completed")
    last_step = [e for e in events if isinstance(e, StepMetrics)][-1]
    assert last_step.elapsed_s < end.elapsed_s < wall       # the whole run, from its start
    folder = RunFolder(tmp_path / "run")
    assert folder.config().steps == 3 and folder.tokenizer().vocab_size == 260
    assert [type(e) for e in read_events(folder.metrics_path)] == [type(e) for e in events]
    assert read_events(folder.metrics_path)[1:-1] == events[1:-1]   # steps and checkpoints
    saved = [e for e in events if isinstance(e, CheckpointSaved)]
    names = [f"step-{s:08d}" for s in (1, 2, 3)]
    assert saved == [CheckpointSaved(s, str(folder.checkpoints / n))
                     for s, n in zip((1, 2, 3), names)]
    assert sorted(p.name for p in folder.checkpoints.glob("step-*")) == names[2:]   # keep 1
    state = read_state(folder.checkpoints / names[-1])
    assert state["tokens_seen"] == 3 * 32 and state["config"]["steps"] == 3
    assert isinstance(state["data"], dict) and isinstance(state["rng"], dict)
    assert "optimizer" in state and state["scaler"] is None   # fp32: no loss scaling to keep
    assert trainer.state.saved_step == 3


def test_a_run_of_one_step_keeps_it_and_one_stopped_before_any_keeps_nothing(tmp_path):
    from tfstudio.train.events import CheckpointSaved
    _, end, events = _run(tmp_path, steps=1)
    assert end.step == 1 and [e.step for e in events if isinstance(e, CheckpointSaved)] == [1]
    stopped = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**TINY, steps=3),
                      run_dir=tmp_path / "none")
    stopped.stop()
    assert stopped.run().step == 0
    assert not list((tmp_path / "none" / "checkpoints").glob("step-*"))


def _raising_at(trainer, step, exc):
    real = trainer._train_step

    def train_step():
        if trainer.state.step == step:
            raise exc
        return real()
    trainer._train_step = train_step


@pytest.mark.parametrize("kind", ["nan", "oom", "error"])
def test_a_fault_mid_run_ends_it_with_the_kind_the_step_and_what_to_do(kind, monkeypatch):
    import tfstudio.train.trainer as trainer_module
    from tfstudio.train.events import Failed
    from tfstudio.train.trainer import NonFiniteLoss
    shutdowns = []
    monkeypatch.setattr(trainer_module, "shutdown",
                        lambda info, wait_for_peers=False: shutdowns.append(wait_for_peers))
    exc = {"nan": NonFiniteLoss("the loss became nan at step 3"),
           "oom": torch.OutOfMemoryError("CUDA out of memory"),
           "error": ValueError("boom")}[kind]
    events = []
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**{**TINY, "steps": 5, "batch_size": 3}),
                      listeners=[events.append])
    _raising_at(trainer, 2, exc)
    end = trainer.run()
    message = {"nan": "the loss became nan at step 3",
               "oom": "out of memory on cpu at step 3. Reduce the batch size (now 3; keep the "
                      "effective batch with grad_accum), the sequence length (now 16) or the "
                      "model's width/depth; on a GPU, bf16 halves activation memory",
               "error": "ValueError: boom"}[kind]
    assert isinstance(end, Failed) and (end.step, end.reason, end.message) == (2, kind, message)
    assert events[-1] is end                        # the listeners hear how it ended
    if kind == "error":   # the traceback, for the log
        assert end.details.startswith("Traceback") and "ValueError: boom" in end.details
    else:
        assert end.details == ""
    assert shutdowns == [False]                     # a failed rank never waits for its peers
    shutdowns.clear()
    done = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**TINY, steps=1)).run()
    assert done.reason == "completed" and shutdowns == [True]


def test_a_refused_run_says_why_at_step_0(tmp_path):
    import os
    from tfstudio.runs.lock import RunLock
    from tfstudio.train.events import Failed
    _, end, events = _run(steps=2, lr=-1.0)
    assert end == Failed(0, "refused", "lr must be positive; got -1.0") and events == [end]
    with RunLock(tmp_path / "busy"):      # another writer holds the folder
        _, end, _ = _run(tmp_path, name="busy", steps=2)
    assert (end.step, end.reason) == (0, "refused")
    assert f"is being written by another training run (process {os.getpid()})" in end.message


def test_an_old_run_is_replaced_only_when_asked_and_resumed_when_asked(tmp_path):
    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.events import Finished, Started
    _run(tmp_path, steps=2)
    _, end, _ = _run(tmp_path, steps=2)                    # neither --force nor --resume
    assert end.reason == "refused" and "already holds a trained run" in end.message
    trainer, end, events = _run(tmp_path, steps=2, resume=True)
    assert end == Finished(2, "already finished", note=end.note) and trainer.step == 2
    assert end.note.startswith(f"{tmp_path / 'run'} already finished at step 2; to train "
                               "further, resume with --steps N (more than 2)")
    assert trainer.config.steps == 2 and events == [end]
    _, end, events = _run(tmp_path, steps=1, overwrite=True)   # --force: a new run
    assert end.reason == "completed" and isinstance(events[0], Started)
    assert RunFolder(tmp_path / "run").config().steps == 1


def test_a_resumed_run_continues_exactly_from_its_newest_intact_checkpoint(tmp_path):
    import json
    from tfstudio.runs.folder import RunFolder
    # the same cosine horizon (a stopped run keeps the one it started with)
    _, _, straight = _run(tmp_path, name="straight", steps=4, lr_decay_steps=4)
    _run(tmp_path, steps=2, checkpoint_every=1, lr_decay_steps=4)
    folder = RunFolder(tmp_path / "run")
    weights = folder.checkpoints / "step-00000002" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])         # the newest checkpoint is damaged
    with open(folder.metrics_path, "a") as f:               # and step 2 was logged before it
        f.write(json.dumps({**straight[2].to_dict(), "loss": 99.0}) + "\n")
    trainer, end, resumed = _run(tmp_path, steps=4, resume=True)
    assert end.reason == "completed" and end.step == 4
    notes = resumed[0].notes
    assert len(notes) == 1 and "step-00000002" in notes[0]   # said which one was passed over
    steps = [e for e in resumed if isinstance(e, StepMetrics)]
    expected = [e for e in straight if isinstance(e, StepMetrics)][1:]
    assert [e.step for e in steps] == [2, 3, 4]
    assert [e.tokens_seen for e in steps] == [64, 96, 128]
    assert [e.loss for e in steps] == pytest.approx([e.loss for e in expected], rel=1e-5)
    assert folder.config().steps == 4                        # the extension is recorded
    logged = [e.step for e in __import__("tfstudio.train.events", fromlist=["x"]).read_events(
        folder.metrics_path) if isinstance(e, StepMetrics)]
    assert logged == [1, 2, 3, 4]                            # step 2 once, from this run


def test_a_given_tokenizer_and_corpus_are_the_ones_trained_on(tmp_path):
    from tfstudio.data import load_corpus
    path = tmp_path / "text.txt"
    path.write_text("abcab cabca bcabc " * 40)
    corpus = load_corpus(str(path))
    tok = CharTokenizer("abc ")
    trainer, end, events = _run(steps=1, tokenizer=tok, corpus=corpus)
    assert end.reason == "completed"
    assert trainer.pipeline.corpus is corpus and trainer.tokenizer is tok
    embed = trainer.model.state_dict()["embed.weight"]
    assert embed.shape[0] == tok.vocab_size


def test_model_flops_utilisation_uses_three_times_the_forward_flops(monkeypatch):
    import tfstudio.train.trainer as trainer_module
    from tfstudio.graph.cost import estimate_cost
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    from tfstudio.train.trainer import _training_flops_per_token
    monkeypatch.setattr(trainer_module, "peak_flops", lambda device: 1e12)
    trainer, _, events = _run(steps=1)
    graph = fit_graph_to_tokenizer(tfstudio.load_graph("tiny-gpt"), ByteTokenizer())
    forward = estimate_cost(graph, context_length=16).flops_per_token
    assert forward != estimate_cost(graph, context_length=64).flops_per_token
    (step,) = [e for e in events if isinstance(e, StepMetrics)]
    assert step.mfu == pytest.approx(3 * forward * step.tokens_per_s / 1e12)
    assert _training_flops_per_token(object(), 16) == 0.0    # no estimate: 0, never a failure


def test_init_from_starts_with_the_sources_weights_and_says_what_was_fitted(tmp_path):
    from padded_run import padded_byte_run
    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.events import Started
    _, _, source, _ = padded_byte_run(tmp_path / "source")
    saved = RunFolder(tmp_path / "source").load_model().state_dict()
    at_start = {}

    def listener(event):
        if isinstance(event, Started):
            at_start.update({k: v.clone() for k, v in trainer.model.state_dict().items()})
    events = []
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"),
                      TrainConfig(**TINY, steps=1, init_from=str(source.path)),
                      listeners=[events.append, listener])
    end = trainer.run()
    assert end.reason == "completed", end
    assert events[0].notes == [f"--init-from {source.path}: embed.weight narrowed from 264 to "
                               "260 rows for this run's tokenizer"]
    assert torch.equal(at_start["embed.weight"], saved["embed.weight"][:260])
    for name, value in saved.items():
        assert torch.equal(at_start[name], value[:260] if value.shape[0] == 264 else value), name


def test_the_compile_option_trains_the_compiled_module(monkeypatch):
    calls = []

    class Compiled(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *args, **kw):
            calls.append(1)
            return self.inner(*args, **kw)
    monkeypatch.setattr(torch, "compile", lambda module: Compiled(module))
    trainer, end, _ = _run(steps=2, compile=True)
    assert end.reason == "completed" and isinstance(trainer.train_model, Compiled)
    assert trainer.train_model.inner is trainer.model and len(calls) == 2


def test_a_paused_run_waits_between_steps_until_resumed_or_stopped():
    import threading
    seen = {}

    def pause_at_2(trainer, then):
        def listener(event):
            if isinstance(event, StepMetrics) and event.step == 2:
                trainer.pause()

                def later():
                    time.sleep(0.5)
                    seen[then] = (trainer.step, trainer.paused)
                    trainer.resume() if then == "resume" else trainer.stop()
                threading.Thread(target=later).start()
        return listener
    for then, reason, step in (("resume", "completed", 4), ("stop", "stopped", 2)):
        trainer = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**TINY, steps=4))
        trainer.listeners.append(pause_at_2(trainer, then))
        end = trainer.run()
        assert seen[then] == (2, True)              # half a second later: still at step 2
        assert (end.reason, end.step) == (reason, step)


def test_probes_during_a_run_carry_the_snapshot():
    from tfstudio.train.events import Probe
    _, _, events = _run(steps=2, probe_every=2)
    probes = [e for e in events if isinstance(e, Probe)]
    assert [p.step for p in probes] == [0, 2]
    assert all(p.data["step"] == p.step and p.data["tokens"] for p in probes)


# ---------------------------------------------------------------- start.py

from tfstudio.train import start as start_module  # noqa: E402
from tfstudio.train.start import FSDP_RESUME, RunRefused, plan_start  # noqa: E402

TWO_RANKS = DistInfo(rank=1, world_size=2, local_rank=1)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A 2-step run of tiny-gpt (checkpoints at 1 and 2), lr 0.01, warmup 1, seed 7."""
    root = tmp_path_factory.mktemp("finished")
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"),
                      TrainConfig(**{**TINY, "steps": 2, "checkpoint_every": 1, "lr": 0.01,
                                     "warmup_steps": 1, "seed": 7}), run_dir=root / "run")
    assert trainer.run().reason == "completed"
    return root / "run"


@pytest.fixture
def run_copy(finished_run, tmp_path):
    import shutil
    from tfstudio.runs.folder import RunFolder
    shutil.copytree(finished_run, tmp_path / "run")
    return RunFolder(tmp_path / "run")


def _plan(config, folder=None, *, resume=False, overwrite=False, dist=None, tokenizer=None,
          lock=None, graph="tiny-gpt"):
    return plan_start(tfstudio.load_graph(graph), config, folder=folder, resume=resume,
                      overwrite=overwrite, dist=dist or DistInfo(), tokenizer=tokenizer, lock=lock)


def test_a_new_run_is_planned_on_the_cpu_in_fp32_without_replacing_anything(tmp_path):
    from tfstudio.runs.folder import RunFolder
    cfg = TrainConfig(**TINY, device="cpu", precision="auto")
    tok = ByteTokenizer()
    start = _plan(cfg, RunFolder(tmp_path / "new"), tokenizer=tok)
    assert (start.device, start.precision, start.checkpoint) == (torch.device("cpu"), "fp32", None)
    assert start.config is cfg and start.tokenizer is tok and start.graph.meta["name"] == "tiny-gpt"
    assert not start.replace_old and not start.config_changed and start.finished_note == ""
    assert start.state == {}


def test_settings_and_file_errors_are_refusals_in_their_own_words(tmp_path):
    with pytest.raises(RunRefused, match=r"^steps must be at least 1; got 0$"):
        _plan(TrainConfig(**{**TINY, "steps": 0}))
    with pytest.raises(RunRefused, match=r"^fp16 training needs a GPU; use bf16 or fp32 on the "
                                         r"CPU$"):
        _plan(TrainConfig(**TINY, device="cpu", precision="fp16"))
    with pytest.raises(RunRefused, match=r"^cannot resume without a run folder \(--out\)$"):
        _plan(TrainConfig(**TINY), resume=True)


def test_the_lock_is_taken_before_anything_else(tmp_path, run_copy):
    from tfstudio.runs.lock import RunLock
    lock = RunLock(run_copy.path)
    _plan(TrainConfig(**TINY), run_copy, resume=True, lock=lock)
    assert lock.held
    with pytest.raises(RunRefused, match="is being written by another training run"):
        _plan(TrainConfig(**TINY), run_copy, resume=True, lock=run_copy.lock())
    lock.release()


def test_a_folder_with_a_run_is_replaced_only_with_overwrite(run_copy):
    with pytest.raises(RunRefused) as refused:
        _plan(TrainConfig(**TINY), run_copy)
    assert str(refused.value) == (f"{run_copy.path} already holds a trained run; continue it "
                                  "with --resume, choose another --out, or replace it with --force")
    assert _plan(TrainConfig(**TINY), run_copy, overwrite=True).replace_old


def test_init_from_needs_a_run_with_a_checkpoint_and_brings_its_tokenizer(tmp_path, run_copy):
    from tfstudio.runs.folder import RunFolder
    with pytest.raises(RunRefused) as none:
        _plan(TrainConfig(**TINY, init_from=str(tmp_path / "nothing")))
    assert str(none.value) == (f"--init-from {tmp_path / 'nothing'}: not a tfstudio run folder "
                               "(no config.json/graph.json)")
    start = _plan(TrainConfig(**TINY, init_from=str(run_copy.path)), RunFolder(tmp_path / "new"))
    assert start.tokenizer.vocab_size == 260 and start.checkpoint is None
    given = CharTokenizer("ab")
    assert _plan(TrainConfig(**TINY, init_from=str(run_copy.path)),
                 tokenizer=given).tokenizer is given
    import shutil
    for step in ("step-00000001", "step-00000002"):
        weights = run_copy.checkpoints / step / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[:50])
    with pytest.raises(RunRefused) as damaged:
        _plan(TrainConfig(**TINY, init_from=str(run_copy.path)))
    text = str(damaged.value)
    assert text.startswith(f"--init-from {run_copy.path}: no checkpoint there to start from (")
    assert "step-00000002" in text and "model.safetensors" in text
    shutil.rmtree(run_copy.checkpoints)
    with pytest.raises(RunRefused) as empty:
        _plan(TrainConfig(**TINY, init_from=str(run_copy.path)))
    assert str(empty.value) == f"--init-from {run_copy.path}: no checkpoint there to start from"


def test_resuming_keeps_the_saved_data_and_schedule_settings(run_copy):
    asked = TrainConfig(**{**TINY, "steps": 5, "lr": 0.5, "seed": 1, "batch_size": 4,
                           "eval_every": 3, "log_every": 2})
    start = _plan(asked, run_copy, resume=True)
    saved = run_copy.config()
    for name in start_module.KEPT_ON_RESUME:
        if name != "lr_decay_steps":
            assert getattr(start.config, name) == getattr(saved, name), name
    assert (start.config.lr, start.config.seed, start.config.batch_size) == (0.01, 7, 2)
    assert (start.config.steps, start.config.eval_every, start.config.log_every) == (5, 3, 2)
    assert start.config.lr_decay_steps == 2 and start.config_changed   # the horizon stays
    assert start.checkpoint == run_copy.checkpoints / "step-00000002"
    assert start.state["step"] == 2 and "optimizer" in start.state
    assert start.tokenizer.vocab_size == 260 and start.graph.meta["name"] == "tiny-gpt"
    assert (start.device, start.precision) == (torch.device("cpu"), "fp32")
    assert start.finished_note == ""
    same = _plan(TrainConfig(**{**TINY, "steps": 2}), run_copy, resume=True)
    assert not same.config_changed and same.config.lr_decay_steps == 0


def test_resuming_a_finished_run_says_where_its_learning_rate_would_continue(run_copy):
    import json
    from tfstudio.train.optim import lr_at
    start = _plan(TrainConfig(**{**TINY, "steps": 2}), run_copy, resume=True)
    rate = lr_at(2, lr=0.01, warmup=1, total=2, min_ratio=0.1)    # = 0.01 * 0.1
    assert rate == pytest.approx(1e-3)
    assert start.finished_note == (
        f"{run_copy.path} already finished at step 2; to train further, resume with --steps N "
        f"(more than 2): the learning rate continues at the end of its schedule, {rate:.2e}")
    assert not start.config_changed
    config = json.loads(run_copy.config_path.read_text())       # a run with its own horizon
    run_copy.config_path.write_text(json.dumps({**config, "lr_decay_steps": 4}))
    note = _plan(TrainConfig(**{**TINY, "steps": 2}), run_copy, resume=True).finished_note
    assert note.endswith(f"{lr_at(2, lr=0.01, warmup=1, total=4, min_ratio=0.1):.2e}")
    assert not note.endswith(f"{rate:.2e}")
    with pytest.raises(RunRefused) as past:
        _plan(TrainConfig(**{**TINY, "steps": 1}), run_copy, resume=True)
    assert str(past.value) == (f"{run_copy.path} is at step 2, past --steps 1; resume with "
                               "--steps N (more than 2) to train further")


def test_resuming_without_a_usable_checkpoint_is_refused_with_the_reason(tmp_path, run_copy):
    import json
    import shutil
    from tfstudio.runs.folder import RunFolder
    state_path = run_copy.checkpoints / "step-00000002" / "state.json"
    state = json.loads(state_path.read_text())

    def refusal(**changes):
        changed = {k: v for k, v in {**state, **changes}.items() if v is not None}
        state_path.write_text(json.dumps(changed))
        (run_copy.checkpoints / "step-00000002" / "manifest.json").unlink(missing_ok=True)
        with pytest.raises(RunRefused) as refused:
            _plan(TrainConfig(**{**TINY, "steps": 4}), run_copy, resume=True)
        return str(refused.value)
    ckpt = run_copy.checkpoints / "step-00000002"
    assert refusal(optimizer=None) == (
        f"{ckpt} holds no optimizer state, so the run cannot continue exactly; start a new run "
        f"from its weights (--init-from {run_copy.path})")
    assert refusal(optimizer=None, imported_from="hf") == (
        f"{run_copy.path} was imported, not trained here, so it has no optimizer state to "
        f"resume; train from its weights with --init-from {run_copy.path}")
    config = json.loads(run_copy.config_path.read_text())
    run_copy.config_path.write_text(json.dumps({**config, "parallel": "fsdp"}))
    assert refusal(optimizer=None) == FSDP_RESUME             # also in a single process
    run_copy.config_path.write_text(json.dumps(config))
    assert refusal(rng=None) == (
        f"{ckpt / 'state.json'} lacks the rng state a resume needs; start a new run from its "
        f"weights (--init-from {run_copy.path})")
    assert refusal(data=None, rng=[1]).startswith(f"{ckpt / 'state.json'} lacks the data and "
                                                  "rng state")
    empty = RunFolder(tmp_path / "empty")
    empty.write_setup(tfstudio.load_graph("tiny-gpt"), TrainConfig(), ByteTokenizer())
    with pytest.raises(RunRefused) as none:
        _plan(TrainConfig(**TINY), empty, resume=True)
    assert str(none.value) == (f"cannot resume: {empty.path} has no checkpoint; start a new run "
                               "instead (drop --resume)")
    shutil.copytree(run_copy.path, tmp_path / "damaged")
    damaged = RunFolder(tmp_path / "damaged")
    for step in ("step-00000001", "step-00000002"):
        weights = damaged.checkpoints / step / "model.safetensors"
        weights.write_bytes(b"")
    with pytest.raises(RunRefused) as skipped:
        _plan(TrainConfig(**TINY), damaged, resume=True)
    assert str(skipped.value).startswith(f"{damaged.path} has no intact checkpoint: ")


def test_sharded_runs_refuse_probes_and_resuming_under_torchrun():
    probes = TrainConfig(**TINY, parallel="fsdp", probe_every=5)
    with pytest.raises(RunRefused) as refused:
        start_module._check_parallel(probes, TWO_RANKS, resuming=False)
    assert str(refused.value) == (
        "probes read the whole model on one process, which a sharded (--parallel fsdp) model "
        "does not have; set --probe-every 0 or train with ddp")
    with pytest.raises(RunRefused) as resumed:
        start_module._check_parallel(TrainConfig(**TINY, parallel="fsdp"), TWO_RANKS, True)
    assert str(resumed.value) == FSDP_RESUME
    start_module._check_parallel(probes, DistInfo(), resuming=True)          # one process
    start_module._check_parallel(TrainConfig(**TINY, probe_every=5), TWO_RANKS, True)   # ddp


def test_the_memory_check_sees_the_graph_and_device_as_they_will_be_built(monkeypatch):
    from tfstudio.train.start import Start, _check_memory
    calls = []
    monkeypatch.setattr(start_module, "check_training_memory",
                        lambda graph, **kw: calls.append((graph, kw)))
    cfg = TrainConfig(**{**TINY, "grad_accum": 3, "parallel": "fsdp"})
    start = Start(cfg, tfstudio.load_graph("tiny-gpt"), CharTokenizer("abc"),
                  torch.device("cuda"), "bf16")
    _check_memory(start, TWO_RANKS)
    graph, kw = calls[-1]
    sizes = {n.params["vocab_size"] for _, n in graph.walk() if "vocab_size" in n.params}
    assert sizes == {CharTokenizer("abc").vocab_size}
    assert kw == {"batch": 2, "seq_len": 16, "grad_accum": 3, "precision": "bf16",
                  "device": "cuda:1", "world_size": 2, "sharded": True}
    start.tokenizer, start.device, start.config = None, torch.device("cpu"), TrainConfig(**TINY)
    _check_memory(start, DistInfo())
    graph, kw = calls[-1]
    assert graph is start.graph
    assert (kw["device"], kw["world_size"], kw["sharded"]) == ("cpu", 1, False)
    _check_memory(Start(cfg, start.graph, None, torch.device("cuda"), "bf16"), DistInfo())
    assert (calls[-1][1]["device"], calls[-1][1]["sharded"]) == ("cuda", False)


def test_the_memory_check_is_skipped_when_asked_or_when_nothing_will_train(monkeypatch,
                                                                         run_copy):
    calls = []
    monkeypatch.setattr(start_module, "_check_memory", lambda start, dist: calls.append(start))
    _plan(TrainConfig(**TINY, no_memory_check=True))
    assert calls == []
    _plan(TrainConfig(**{**TINY, "steps": 2}), run_copy, resume=True)   # already finished
    assert calls == []
    start = _plan(TrainConfig(**TINY))
    assert calls == [start]


def test_a_run_too_big_for_memory_is_refused_before_anything_is_built():
    with pytest.raises(RunRefused, match="--no-memory-check"):
        _plan(TrainConfig(**{**TINY, "batch_size": 20_000_000, "device": "cpu"}))


# ---------------------------------------------------------------- device.py


def test_auto_takes_cuda_then_mps_then_the_cpu(monkeypatch):
    from tfstudio.train.device import pick_device
    mps = SimpleNamespace(is_available=lambda: False)
    monkeypatch.setattr(torch.backends, "mps", mps)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert pick_device("auto") == torch.device("cpu") and pick_device() == torch.device("cpu")
    mps.is_available = lambda: True
    assert pick_device("auto") == torch.device("mps")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert pick_device("auto") == torch.device("cuda")


def test_an_explicit_device_is_checked(monkeypatch):
    from tfstudio.train.device import pick_device
    mps = SimpleNamespace(is_available=lambda: False)
    monkeypatch.setattr(torch.backends, "mps", mps)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert pick_device("cpu") == torch.device("cpu")
    with pytest.raises(ValueError) as cuda:
        pick_device("cuda:1")
    assert str(cuda.value) == ("device 'cuda' was asked for but no CUDA GPU is available; use "
                               "--device cpu (or auto)")
    with pytest.raises(ValueError) as apple:
        pick_device("mps")
    assert str(apple.value) == ("device 'mps' was asked for but Apple's MPS is not available; "
                                "use --device cpu (or auto)")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    mps.is_available = lambda: True
    assert pick_device("cuda:1") == torch.device("cuda", 1)
    assert pick_device("mps") == torch.device("mps")


def test_precision_auto_is_bf16_only_on_a_gpu_that_has_it(monkeypatch):
    from tfstudio.train.device import pick_precision
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    assert pick_precision("auto", cuda) == "bf16" and pick_precision("auto", cpu) == "fp32"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: False)
    assert pick_precision("auto", cuda) == "fp32"
    assert pick_precision("fp16", cuda) == "fp16" and pick_precision("bf16", cpu) == "bf16"
    with pytest.raises(ValueError) as refused:
        pick_precision("fp16", cpu)
    assert str(refused.value) == "fp16 training needs a GPU; use bf16 or fp32 on the CPU"


def test_autocast_lowers_to_the_precision_asked_for():
    from tfstudio.train.device import autocast
    cpu = torch.device("cpu")
    with autocast(cpu, "fp32"):
        assert not torch.is_autocast_enabled("cpu")
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32
    with autocast(cpu, "bf16"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    half = autocast(cpu, "fp16")
    assert (half.device, half.fast_dtype) == ("cpu", torch.float16)


@pytest.mark.parametrize("name, peak", [  # dense bf16 tensor FLOP/s from the datasheets
    ("NVIDIA H200", 989e12), ("NVIDIA H100 80GB HBM3", 989e12), ("NVIDIA A100-SXM4-80GB", 312e12),
    ("NVIDIA L40S", 362e12), ("NVIDIA A10", 125e12), ("NVIDIA GeForce RTX 4090", 165e12),
    ("NVIDIA GeForce RTX 3090", 71e12), ("Tesla V100-SXM2-16GB", 125e12), ("Tesla T4", 65e12),
    ("NVIDIA GeForce GTX 1080", None)])
def test_peak_flops_of_known_gpus(name, peak, monkeypatch):
    from tfstudio.train.device import peak_flops
    asked = []
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d: asked.append(d) or name)
    assert peak_flops(torch.device("cuda", 1)) == peak
    assert asked == [torch.device("cuda", 1)]
    assert peak_flops(torch.device("cpu")) is None


# ---------------------------------------------------------------- distributed.py

from tfstudio.train import distributed as dist_module  # noqa: E402


def test_the_launch_environment_gives_rank_world_and_local_rank(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert dist_module.from_environment() == DistInfo()
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("RANK", "0")
    assert dist_module.from_environment() == DistInfo()
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    assert dist_module.from_environment() == DistInfo(1, 2, 0)      # two processes: enabled
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "3")
    assert dist_module.from_environment() == DistInfo(3, 4, 0)
    monkeypatch.setenv("LOCAL_RANK", "1")
    info = dist_module.from_environment()
    assert info == DistInfo(3, 4, 1) and info.enabled and not info.is_main
    assert DistInfo().is_main and not DistInfo().enabled and DistInfo(0, 2).is_main


class FakeGroup:
    """torch.distributed as seen by one rank of two: collectives combine this rank's tensor
    with ``other`` (the peer's value) by the op asked for."""

    def __init__(self, monkeypatch, other=0.0, initialized=False):
        self.other, self.initialized, self.calls = other, initialized, []
        d = torch.distributed
        for name in ("init_process_group", "destroy_process_group", "barrier", "all_reduce",
                     "is_initialized"):
            monkeypatch.setattr(d, name, getattr(self, name))
        monkeypatch.setattr(torch.cuda, "set_device", lambda dev: self.calls.append(("set", dev)))

    def is_initialized(self):
        return self.initialized

    def init_process_group(self, **kw):
        self.calls.append(("init", kw))

    def destroy_process_group(self):
        self.calls.append("destroy")

    def barrier(self):
        self.calls.append("barrier")

    def all_reduce(self, t, op):
        self.calls.append(("all_reduce", op, t.dtype))
        other = torch.tensor([self.other], dtype=t.dtype)
        t.copy_(t + other if op == torch.distributed.ReduceOp.SUM else torch.minimum(t, other))


def test_joining_picks_gloo_on_the_cpu_and_nccl_on_this_ranks_gpu(monkeypatch):
    group = FakeGroup(monkeypatch)
    cpu = torch.device("cpu")
    assert dist_module.init(DistInfo(), cpu) is cpu and group.calls == []
    assert dist_module.init(TWO_RANKS, cpu) == cpu
    assert group.calls == [("init", {"backend": "gloo", "rank": 1, "world_size": 2})]
    group.calls.clear()
    assert dist_module.init(DistInfo(0, 4, 3), torch.device("cuda")) == torch.device("cuda", 3)
    assert group.calls == [("set", torch.device("cuda", 3)),
                           ("init", {"backend": "nccl", "rank": 0, "world_size": 4})]
    group.calls.clear()
    group.initialized = True                       # joined already: left as it is
    assert dist_module.init(TWO_RANKS, torch.device("cuda")) == torch.device("cuda")
    assert group.calls == []


def test_leaving_waits_for_the_peers_only_when_asked(monkeypatch):
    group = FakeGroup(monkeypatch, initialized=True)
    dist_module.shutdown(TWO_RANKS)
    assert group.calls == ["destroy"]
    dist_module.shutdown(TWO_RANKS, wait_for_peers=True)
    assert group.calls == ["destroy", "barrier", "destroy"]
    group.calls.clear()
    dist_module.shutdown(DistInfo(), wait_for_peers=True)      # one process: nothing to leave
    group.initialized = False
    dist_module.shutdown(TWO_RANKS, wait_for_peers=True)       # never joined
    assert group.calls == []


def test_the_loss_is_averaged_over_ranks_in_double_precision(monkeypatch):
    group = FakeGroup(monkeypatch, other=0.2)
    cpu = torch.device("cpu")
    assert dist_module.mean_across_ranks(0.1, DistInfo(), cpu) == 0.1 and group.calls == []
    assert dist_module.mean_across_ranks(0.1, TWO_RANKS, cpu) == (0.1 + 0.2) / 2
    assert group.calls == [("all_reduce", torch.distributed.ReduceOp.SUM, torch.float64)]


@pytest.mark.parametrize("mine, theirs, agreed", [(True, 1, True), (True, 0, False),
                                                  (False, 1, False), (False, 0, False)])
def test_ranks_agree_only_when_every_rank_holds(mine, theirs, agreed, monkeypatch):
    group = FakeGroup(monkeypatch, other=theirs)
    assert dist_module.all_ranks_agree(mine, TWO_RANKS, torch.device("cpu")) is agreed
    assert dist_module.all_ranks_agree(mine, DistInfo(), torch.device("cpu")) is mine
    assert [c[:2] for c in group.calls] == [("all_reduce", torch.distributed.ReduceOp.MIN)]


def test_each_rank_takes_its_own_slice_of_the_global_batch():
    assert [dist_module.local_rows(12, DistInfo(r, 3)) for r in range(3)] == \
        [(0, 4), (4, 8), (8, 12)]
    assert dist_module.local_rows(5, DistInfo()) == (0, 5)
    with pytest.raises(ValueError) as uneven:
        dist_module.local_rows(10, DistInfo(0, 4))
    assert str(uneven.value) == ("batch size 10 does not split evenly over 4 processes; pick a "
                                 "multiple of 4")


def test_a_sharded_scalar_is_read_whole():
    plain = torch.tensor(2.0)
    assert dist_module.as_local(plain) is plain
    sharded = SimpleNamespace(full_tensor=lambda: torch.tensor(5.0))
    assert float(dist_module.as_local(sharded)) == 5.0


@pytest.fixture
def one_rank_group(tmp_path):
    """A real gloo process group of one rank (so DDP and FSDP2 can wrap in this process)."""
    import torch.distributed as d
    d.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0,
                         world_size=1)
    try:
        yield
    finally:
        d.destroy_process_group()


def test_one_process_trains_the_model_itself_and_keeps_its_weights():
    from tfstudio.compiler import compile_graph
    model = compile_graph(tfstudio.load_graph("tiny-gpt"))
    for parallel in ("ddp", "fsdp"):
        assert dist_module.wrap_for_training(model, DistInfo(), parallel,
                                             torch.device("cpu")) is model
        assert dist_module.full_weights(model, DistInfo(), parallel) is None
    assert dist_module.full_weights(model, TWO_RANKS, "ddp") is None   # replicas are whole


def test_ddp_wraps_the_model_for_gradient_averaging(one_rank_group):
    from torch.nn.parallel import DistributedDataParallel
    from tfstudio.compiler import compile_graph
    model = compile_graph(tfstudio.load_graph("tiny-gpt"))
    wrapped = dist_module.wrap_for_training(model, DistInfo(0, 2), "ddp", torch.device("cpu"))
    assert isinstance(wrapped, DistributedDataParallel) and wrapped.module is model
    assert wrapped.device_ids is None                 # CPU replicas name no device


def test_fsdp_shards_each_layer_copy_and_the_root_and_gathers_whole_weights(one_rank_group):
    from torch.distributed.fsdp import FSDPModule
    from tfstudio.compiler import compile_graph
    torch.manual_seed(0)
    model = compile_graph(tfstudio.load_graph("tiny-gpt"))
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    wrapped = dist_module.wrap_for_training(model, DistInfo(0, 2), "fsdp", torch.device("cpu"))
    assert wrapped is model and isinstance(model, FSDPModule)
    sharded = {key for key, module in model.blocks() if isinstance(module, FSDPModule)}
    assert sharded == {("layers", 0), ("layers", 1)}
    whole = dist_module.full_weights(model, DistInfo(0, 2), "fsdp")
    assert whole.keys() == before.keys()
    for name, value in before.items():
        assert type(whole[name]) is torch.Tensor and whole[name].device.type == "cpu"
        assert torch.equal(whole[name], value), name


# ---------------------------------------------------------------- init_from.py

def test_widening_keeps_every_row_and_adds_the_mean_row_in_the_tables_dtype():
    from tfstudio.train.init_from import resize_rows
    table = torch.tensor([[1.0, 2.0], [3.0, 6.0]], dtype=torch.bfloat16)
    wide = resize_rows(table, 4)
    assert wide.dtype == torch.bfloat16
    assert wide.tolist() == [[1.0, 2.0], [3.0, 6.0], [2.0, 4.0], [2.0, 4.0]]
    narrow = resize_rows(table, 1)
    assert narrow.tolist() == [[1.0, 2.0]]
    narrow[0, 0] = 9.0                                  # a copy: the source is untouched
    assert table[0, 0] == 1.0
    same = resize_rows(table, 2)
    assert same.tolist() == table.tolist() and same.data_ptr() != table.data_ptr()


def _repeated(graph_name="tiny-gpt", repeat=None, d_model=None):
    graph = tfstudio.load_graph(graph_name)
    for _, node in graph.walk():
        if repeat is not None and node.type == "group":
            node.params["repeat"] = repeat
        if d_model is not None and "d_model" in node.params:
            node.params["d_model"] = d_model
    return graph


def test_weights_that_do_not_fit_the_graph_are_refused_with_what_differs(finished_run):
    from tfstudio.compiler import compile_graph
    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.init_from import load_weights_from
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    folder = RunFolder(finished_run)

    def refusal(graph):
        model = compile_graph(fit_graph_to_tokenizer(graph, ByteTokenizer()))
        with pytest.raises(RunRefused) as refused:
            load_weights_from(folder, model, 260)
        return str(refused.value)
    prefix = f"--init-from {folder.path}: its weights do not fit this graph ("
    advice = f"; train {folder.graph_path} itself, with the run's tokenizer"
    deeper = refusal(_repeated(repeat=3))
    assert deeper.startswith(prefix + "missing ['layers.2.") and deeper.endswith(
        ", unexpected [])" + advice)
    assert len(deeper.split("missing [")[1].split("]")[0].split(", ")) == 3   # the first three
    shallower = refusal(_repeated(repeat=1))
    assert shallower.startswith(prefix + "missing [], unexpected ['layers.1.")
    assert len(shallower.split("unexpected [")[1].split("]")[0].split(", ")) == 3
    wider = refusal(_repeated(d_model=32))
    assert wider.startswith(prefix + "size mismatch for ") and wider.endswith(")" + advice)
    assert "\n" not in wider                              # one line of torch's message
    same = compile_graph(fit_graph_to_tokenizer(tfstudio.load_graph("tiny-gpt"), ByteTokenizer()))
    assert load_weights_from(folder, same, 260) == []     # nothing to fit: no notes
    saved = folder.load_model().state_dict()
    assert all(torch.equal(same.state_dict()[k], v) for k, v in saved.items())


def test_narrowing_without_a_tokenizer_file_counts_every_row_as_used(tmp_path):
    from tfstudio.compiler import compile_graph
    from tfstudio.runs.checkpoint import save_checkpoint
    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.init_from import load_weights_from
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    padded = tfstudio.load_graph("tiny-gpt")
    for _, node in padded.walk():
        if "vocab_size" in node.params:
            node.params["vocab_size"] = 264
    folder = RunFolder(tmp_path / "source")
    folder.write_setup(padded, TrainConfig(), ByteTokenizer())
    folder.tokenizer_path.unlink()
    save_checkpoint(folder.checkpoints, 1, compile_graph(padded), None, {})
    model = compile_graph(fit_graph_to_tokenizer(padded, ByteTokenizer()))
    with pytest.raises(RunRefused) as refused:
        load_weights_from(folder, model, 260)
    assert str(refused.value) == (
        f"--init-from {folder.path}: its embedding has 264 rows and its tokens go up to id 263, "
        "but this run's tokenizer has 260 ids, so ids 260..263 would be lost; train with "
        f"{folder.path}'s own tokenizer (leave --tokenizer out)")
    wide = compile_graph(fit_graph_to_tokenizer(padded, SimpleNamespace(vocab_size=270)))
    notes = load_weights_from(folder, wide, 270)
    assert notes == [f"--init-from {folder.path}: embed.weight widened from 264 to 270 rows for "
                     "this run's tokenizer (new rows start as the mean of the old)"]


def test_init_from_a_folder_without_a_checkpoint_is_refused(tmp_path):
    from tfstudio.compiler import compile_graph
    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.init_from import load_weights_from
    folder = RunFolder(tmp_path / "empty")
    folder.write_setup(tfstudio.load_graph("tiny-gpt"), TrainConfig(), ByteTokenizer())
    with pytest.raises(RunRefused) as refused:
        load_weights_from(folder, compile_graph(tfstudio.load_graph("tiny-gpt")), 260)
    assert str(refused.value) == f"--init-from {folder.path}: no checkpoint there to start from"


def test_a_graph_without_a_name_starts_with_an_empty_one():
    from tfstudio.train.events import Started
    graph = tfstudio.load_graph("tiny-gpt")
    del graph.meta["name"]
    events = []
    Trainer(graph, TrainConfig(**TINY, steps=1), listeners=[events.append]).run()
    assert isinstance(events[0], Started) and events[0].graph_name == ""


def _padded_source(tmp_path, *, tie=True, max_len=256):
    """A run folder holding tiny-gpt with 264 vocabulary rows (the byte tokenizer's 260 + 4)."""
    from tfstudio.compiler import compile_graph
    from tfstudio.runs.checkpoint import save_checkpoint
    from tfstudio.runs.folder import RunFolder
    graph = tfstudio.load_graph("tiny-gpt")
    for _, node in graph.walk():
        if "vocab_size" in node.params:
            node.params["vocab_size"] = 264
        if node.type == "lm_head":
            node.params["tie"] = tie
        if node.type == "positional_encoding":
            node.params["max_len"] = max_len
    folder = RunFolder(tmp_path / "source")
    folder.write_setup(graph, TrainConfig(), ByteTokenizer())
    model = compile_graph(graph)
    save_checkpoint(folder.checkpoints, 1, model, None, {})
    return folder, graph, model.state_dict()


def test_every_vocabulary_table_is_widened_also_an_untied_head(tmp_path):
    from tfstudio.compiler import compile_graph
    from tfstudio.train.init_from import load_weights_from
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    folder, graph, source = _padded_source(tmp_path, tie=False)
    model = compile_graph(fit_graph_to_tokenizer(graph, SimpleNamespace(vocab_size=266)))
    notes = load_weights_from(folder, model, 266)
    tables = sorted(k for k, v in source.items() if v.shape[0] == 264)
    assert len(tables) == 2                                  # the embedding and the head
    assert sorted(n.split(": ")[1].split(" ")[0] for n in notes) == tables
    loaded = model.state_dict()
    for name in tables:
        assert torch.equal(loaded[name][:264], source[name])
        assert torch.allclose(loaded[name][264:], source[name].mean(0).expand(2, -1))


@pytest.mark.parametrize("source_len, target_len", [(256, 260), (264, 256)])
def test_a_table_that_is_not_the_vocabulary_is_never_resized(source_len, target_len, tmp_path):
    """A positional table whose length happens to be the new or the old vocabulary size."""
    from tfstudio.compiler import compile_graph
    from tfstudio.train.init_from import load_weights_from
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    folder, graph, _ = _padded_source(tmp_path, max_len=source_len)
    for _, node in graph.walk():
        if node.type == "positional_encoding":
            node.params["max_len"] = target_len
    model = compile_graph(fit_graph_to_tokenizer(graph, ByteTokenizer()))
    with pytest.raises(RunRefused) as refused:
        load_weights_from(folder, model, 260)
    assert str(refused.value) == (
        f"--init-from {folder.path}: its weights do not fit this graph (size mismatch for "
        f"pos.table.weight: copying a param with shape torch.Size([{source_len}, 64]) from "
        "checkpoint, the shape in current model is torch.Size([" + str(target_len) + ", 64]).); "
        f"train {folder.graph_path} itself, with the run's tokenizer")


def test_a_checkpoint_without_a_token_count_resumes_counting_from_zero(tmp_path):
    import json
    from tfstudio.runs.folder import RunFolder
    _run(tmp_path, steps=2)
    ckpt = RunFolder(tmp_path / "run").checkpoints / "step-00000002"
    state = json.loads((ckpt / "state.json").read_text())
    del state["tokens_seen"]
    (ckpt / "state.json").write_text(json.dumps(state))
    (ckpt / "manifest.json").unlink()                         # an older checkpoint: no hashes
    _, end, events = _run(tmp_path, steps=3, resume=True)
    assert end.reason == "completed", end
    assert [e.tokens_seen for e in events if isinstance(e, StepMetrics)] == [32]


def test_a_planned_sharded_run_under_torchrun_refuses_probes_and_resuming(run_copy, tmp_path):
    from tfstudio.runs.folder import RunFolder
    fsdp = {**TINY, "parallel": "fsdp", "no_memory_check": True}
    with pytest.raises(RunRefused, match="^probes read the whole model on one process"):
        _plan(TrainConfig(**fsdp, probe_every=2), dist=TWO_RANKS)
    with pytest.raises(RunRefused) as resumed:
        _plan(TrainConfig(**fsdp), run_copy, resume=True, dist=TWO_RANKS)
    assert str(resumed.value) == FSDP_RESUME
    new = _plan(TrainConfig(**fsdp), RunFolder(tmp_path / "new"), dist=TWO_RANKS)
    assert new.checkpoint is None and new.config.parallel == "fsdp"


class _Tables(torch.nn.Module):
    """Stand-in weights: ``a`` (and ``z``) of the given lengths around a vocabulary table."""

    def __init__(self, vocab, a, z=None):
        super().__init__()
        self.a = torch.nn.Parameter(torch.zeros(a))
        self.embed = torch.nn.Embedding(vocab, 4)
        if z is not None:
            self.z = torch.nn.Parameter(torch.zeros(z))


@pytest.mark.parametrize("z, misfit", [(None, "a"), ((5, 6), "z")])
def test_the_refusal_names_the_last_tensor_that_does_not_fit_and_never_a_fitted_table(
        z, misfit, tmp_path):
    import shutil
    from tfstudio.runs.checkpoint import save_checkpoint
    from tfstudio.train.init_from import load_weights_from
    folder, _, _ = _padded_source(tmp_path)      # a graph of 264 vocabulary rows
    shutil.rmtree(folder.checkpoints / "step-00000001")
    save_checkpoint(folder.checkpoints, 2, _Tables(264, 3, z), None, {})
    target = _Tables(260, 4, None if z is None else (5, 7))
    with pytest.raises(RunRefused) as refused:
        load_weights_from(folder, target, 260)
    source_shape, target_shape = ([3], [4]) if misfit == "a" else ([5, 6], [5, 7])
    assert f"(size mismatch for {misfit}: copying a param with shape torch.Size({source_shape}) " \
           f"from checkpoint, the shape in current model is torch.Size({target_shape}).); " \
           in str(refused.value)


def test_logged_layer_norms_are_of_the_same_step_and_make_up_its_total_norm():
    """tiny-gpt's groups: its blocks' first two key parts (positions live in a sub-table,
    attention in sub-layers); the groups split the parameters, so the total gradient norm is
    the root of the sum of the layers' squares, on every logged step."""
    _, _, events = _run(steps=7, log_every=3)
    steps = [e for e in events if isinstance(e, StepMetrics)]
    assert [e.step for e in steps] == [3, 6, 7]
    for e in steps:
        assert sorted(e.layer_grad_norms) == ["embed", "final_norm", "layers.0", "layers.1",
                                              "pos"]
        total = math.sqrt(sum(v * v for v in e.layer_grad_norms.values()))
        assert total == pytest.approx(e.grad_norm, rel=1e-4)


def test_an_encoder_only_model_is_refused_generation_with_what_to_train_instead():
    model = NextByte([1])
    model.family = "encoder"
    with pytest.raises(ValueError) as refused:
        list(generate_ids(model, [1], max_new_tokens=2))
    assert str(refused.value) == (
        "this is an encoder-only model (a masked LM): it fills in masked positions and does not "
        "generate text left to right; to generate, train a decoder such as tiny-gpt or an "
        "encoder-decoder such as tiny-t5")


def test_text_seq2seq_validates_on_fixed_halved_windows_of_the_tail():
    tokens = np.arange(400) % 250
    pipe = TextSeq2Seq(tokens, _text_cfg(), ByteTokenizer())
    val = pipe.val_batches(2, 2)
    assert pipe.val_batches(2, 2) is val and [len(b.labels) for b in val] == [2, 2]
    tail = pipe.val_tokens.tolist()
    bos = ByteTokenizer().bos_id
    for batch in val:
        source, decoder = batch.inputs
        for row in range(2):
            window = source[row].tolist() + batch.labels[row].tolist()   # 4 + 5 = seq_len + 1
            assert len(window) == 9
            assert any(tail[i:i + 9] == window for i in range(len(tail)))   # from the tail
            assert decoder[row].tolist() == [bos] + batch.labels[row].tolist()[:4]
