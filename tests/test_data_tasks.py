"""Synthetic tasks: answers checked by independent code, answer masks and seq2seq tensors
checked against the example strings, exact resume, and reverse learnable in seconds."""
import json
import re
import time

import pytest
import torch

from tfstudio.data import (DataError, TaskSampler, build_tokenizer, load_corpus, parse_task,
                           task_lm_batch, task_seq2seq_batch)


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path / "cache"))


def _balanced_by_counter(s):
    depth, lowest = 0, 0
    for c in s:
        depth += {"(": 1, ")": -1}[c]
        lowest = min(lowest, depth)
    return depth == 0 and lowest == 0


def test_answers_are_right():
    n = 400
    for e in parse_task("copy").examples(n, seed=1):
        assert e.target == e.source and 4 <= len(e.source) <= 8
    for e in parse_task("reverse").examples(n, seed=1):
        assert e.target == e.source[::-1] and len(e.source) == 8
        assert set(e.source) <= set("abcdefgh")
    for e in parse_task("sort").examples(n, seed=1):
        assert e.target == "".join(sorted(e.source))
    for e in parse_task("induction").examples(n, seed=1):
        assert e.text == e.source * 2 + "\n"
    for e in parse_task("add").examples(n, seed=1):
        a, b = map(int, re.fullmatch(r"(\d{3})\+(\d{3})", e.source).groups())
        assert int(e.target[::-1]) == a + b and len(e.target) == 4 and e.sep == "="
    for e in parse_task("add:digits=5,reverse_answer=false").examples(n, seed=1):
        a, b = map(int, e.source.split("+"))
        assert int(e.target) == a + b and len(e.target) == 6
    balanced = 0
    for e in parse_task("brackets").examples(n, seed=1):
        assert e.source.count("(") == e.source.count(")") == 6
        assert e.target == ("y" if _balanced_by_counter(e.source) else "n")
        balanced += e.target == "y"
    assert 0.4 * n < balanced < 0.6 * n


def test_text_format_and_answer_span():
    e = parse_task("reverse").examples(1, seed=5)[0]
    start, end = e.answer_span
    assert e.text[start:end] == e.source[::-1]
    assert e.text == f"{e.source}>{e.source[::-1]}\n"


def test_same_seed_same_examples_and_bad_specs():
    task = parse_task("sort:min_len=2,max_len=3,letters=xyz")
    assert task.examples(50, seed=7) == task.examples(50, seed=7)
    assert task.examples(50, seed=7) != task.examples(50, seed=8)
    assert task.spec == "task:sort:min_len=2,max_len=3,letters=xyz"
    assert parse_task(task.spec[len("task:"):]).params == task.params
    with pytest.raises(DataError, match="min_len"):
        parse_task("copy:min_len=9,max_len=3")
    with pytest.raises(DataError, match="must be an integer"):
        parse_task("copy:min_len=two")
    with pytest.raises(DataError, match="key=value"):
        parse_task("copy:width=3")
    with pytest.raises(DataError, match="must not contain"):
        parse_task("reverse:letters=ab>")
    with pytest.raises(DataError, match="even"):
        parse_task("brackets:length=7")


@pytest.mark.parametrize("spec", ["byte", "char", "bpe:300"])
def test_lm_batch_answer_mask_marks_exactly_the_answer(spec):
    task = parse_task("add")
    tok = build_tokenizer(spec, load_corpus("pydoc") if spec != "char" else load_corpus(
        "task:add"))
    examples = task.examples(16, seed=3)
    batch = task_lm_batch(examples, tok)
    for row, e in enumerate(examples):
        # BPE may merge across the answer boundary when given the whole line, so only the
        # byte and char ids are compared with encoding the whole line
        ids = tok.encode(e.text) if spec != "bpe:300" else None
        answer_ids = batch.targets[row][batch.answer_mask[row]].tolist()
        assert tok.decode(answer_ids) == e.target
        real = batch.targets[row] != -100
        # targets are the inputs shifted by one; padding is ignored
        assert tok.decode(batch.inputs[row][real].tolist() + [batch.targets[row][real][-1]]) \
            == e.text
        if ids is not None:
            assert batch.targets[row][real].tolist() == ids[1:]


def test_seq2seq_batch_is_teacher_forcing():
    tok = build_tokenizer("byte")
    task = parse_task("copy")
    examples = task.examples(8, seed=4)
    b = task_seq2seq_batch(examples, tok)
    for row, e in enumerate(examples):
        target = list(e.target.encode()) + [tok.eot_id]
        n = len(target)
        assert b.labels[row, :n].tolist() == target
        assert (b.labels[row, n:] == -100).all()
        assert b.decoder_input[row, 0] == tok.bos_id
        assert b.decoder_input[row, 1:n].tolist() == target[:-1]
        src = b.source[row][b.source_mask[row]].tolist()
        assert bytes(src).decode() == e.source
        assert (b.source[row][~b.source_mask[row]] == tok.pad_id).all()


def test_task_sampler_resumes_exactly():
    tok = build_tokenizer("byte")
    sampler = TaskSampler(parse_task("sort"), tok, batch_size=8, seed=11)
    for _ in range(3):
        sampler.next_lm_batch()
    state = json.loads(json.dumps(sampler.state_dict()))
    expected = [sampler.next_lm_batch().inputs for _ in range(2)]
    fresh = TaskSampler(parse_task("sort"), tok, batch_size=8, seed=0)
    fresh.load_state_dict(state)
    for want in expected:
        assert torch.equal(fresh.next_lm_batch().inputs, want)
    held_out = {e.text for e in sampler.eval_examples(64)}
    assert held_out == {e.text for e in fresh.eval_examples(64)}
    with pytest.raises(DataError, match="cannot resume"):
        TaskSampler(parse_task("copy"), tok, 8).load_state_dict(state)


class _TinyGPT(torch.nn.Module):
    """2 pre-norm layers, 64 wide, 4 heads, learned positions, tied head."""

    def __init__(self, vocab, d=64, heads=4, layers=2, max_len=64):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Embedding(max_len, d)
        layer = torch.nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0,
                                                 batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, ids):
        t = ids.shape[1]
        mask = torch.nn.Transformer.generate_square_subsequent_mask(t)
        h = self.blocks(self.tok(ids) + self.pos(torch.arange(t)), mask=mask, is_causal=True)
        return self.norm(h) @ self.tok.weight.T


@pytest.fixture
def one_thread():
    # a tiny model gains nothing from threads, and on a shared CPU they stall each other
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_reverse_is_learnable_to_99_percent_in_seconds(one_thread):
    torch.manual_seed(0)
    tok = build_tokenizer("byte")
    sampler = TaskSampler(parse_task("reverse"), tok, batch_size=64, seed=0)
    held_out = task_lm_batch(sampler.eval_examples(256), tok)
    model = _TinyGPT(tok.vocab_size)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    start, accuracy = time.perf_counter(), 0.0
    for step in range(1, 601):
        batch = sampler.next_lm_batch()
        logits = model(batch.inputs)
        loss = torch.nn.functional.cross_entropy(logits[batch.answer_mask],
                                                 batch.targets[batch.answer_mask])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            with torch.no_grad():
                pred = model(held_out.inputs).argmax(-1)
            accuracy = (pred == held_out.targets)[held_out.answer_mask].float().mean().item()
            if accuracy >= 0.99:
                break
    assert accuracy >= 0.99, f"reverse reached only {accuracy:.3f} in {step} steps"
    assert time.perf_counter() - start < 60
