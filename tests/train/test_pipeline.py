"""Training pipelines and objectives (tfstudio/train/pipeline.py, objectives.py): labels, validation
sets and masks of each pipeline, the loss and accuracy over labelled positions, counted by hand."""
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from train_stand_ins import FixedLogits

import tfstudio
from tfstudio.data import DataError, TaskSampler, load_corpus
from tfstudio.data.masking import IGNORE_INDEX
from tfstudio.data.simple_tokenizers import ByteTokenizer, CharTokenizer
from tfstudio.runs.config import TrainConfig
from tfstudio.train.objectives import Batch, loss_and_logits, token_accuracy
from tfstudio.train.pipeline import TaskLM, TaskSeq2Seq, TextLM, TextMLM, TextSeq2Seq


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


def test_loss_is_the_mean_over_labelled_positions_only():
    logits = torch.tensor([[[2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0]]])
    labels = torch.tensor([[0, IGNORE_INDEX, 1]])
    loss, out = loss_and_logits(FixedLogits(logits), Batch((torch.zeros(1, 3),), labels))
    lse = lambda row: torch.logsumexp(row, 0)  # noqa: E731
    expected = ((lse(logits[0, 0]) - 2.0) + (lse(logits[0, 2]) - 0.0)) / 2
    assert torch.allclose(loss, expected) and out is logits
    none = torch.full((1, 3), IGNORE_INDEX)
    zero, _ = loss_and_logits(FixedLogits(logits), Batch((torch.zeros(1, 3),), none))
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


def test_a_graph_fitted_to_its_tokenizer_is_the_same_model_and_other_heads_are_not():
    """A run saves its graph fitted to the tokenizer; reopening it must not count that as
    another model (the canvas would be replaced), while a change of heads must."""
    from tfstudio.graph import same_model
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    graph = tfstudio.load_graph("tiny-gpt")
    assert same_model(fit_graph_to_tokenizer(graph, SimpleNamespace(vocab_size=77)), graph)
    two_heads = tfstudio.load_graph("tiny-gpt")
    attn = two_heads.node("layers").subgraph.node("attn")
    attn.params["heads"], attn.params["kv_heads"] = 2, 2
    assert not same_model(two_heads, graph)
    assert not same_model(fit_graph_to_tokenizer(two_heads, SimpleNamespace(vocab_size=256)),
                          graph)


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
