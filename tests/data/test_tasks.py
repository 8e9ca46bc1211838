"""Synthetic tasks: answers checked by independent code, answer masks and seq2seq tensors
checked against the example strings, and exact resume. (That a model learns them from these
batches is tests/train/test_learning.py's.)"""
import json
import random
import re
import string

import numpy as np
import pytest
import torch

from tfstudio.data import (DataError, TaskSampler, build_tokenizer, load_corpus, parse_task,
                           seq2seq_batch, task_lm_batch, task_seq2seq_batch)
from tfstudio.data.simple_tokenizers import CharTokenizer
from tfstudio.data.tasks import TASKS, TaskExample, _describe


pytestmark = pytest.mark.usefixtures("private_caches")


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


# ---------------------------------------------------------------- the edges of each case
@pytest.mark.parametrize("text, value", [
    ("1", True), ("true", True), ("yes", True), ("TRUE", True), ("Yes", True),
    ("0", False), ("false", False), ("no", False), ("NO", False), ("False", False)])
def test_boolean_task_parameters_read_every_spelling(text, value):
    task = parse_task(f"add:reverse_answer={text}")
    assert task.reverse_answer is value
    assert task.spec == ("task:add" if value else "task:add:reverse_answer=false")


def test_a_boolean_parameter_that_is_neither_says_so():
    with pytest.raises(DataError, match=r"^task 'add': reverse_answer must be true or false, "
                                        r"got 'maybe'$"):
        parse_task("add:reverse_answer=maybe")


def test_unknown_parameters_list_the_task_parameters_with_defaults():
    with pytest.raises(DataError, match=r"its parameters are digits \(default 3\), "
                                        r"reverse_answer \(default true\)$"):
        parse_task("add").__class__(width=3)
    assert _describe({}) == "none"
    assert _describe({"a": 1, "b": False}) == "a (default 1), b (default false)"


@pytest.mark.parametrize("length, ok", [(2, True), (4, True), (6, True), (3, False),
                                        (0, False), (5, False)])
def test_bracket_lengths_must_be_even_and_at_least_two(length, ok):
    if ok:
        task = parse_task(f"brackets:length={length}")
        assert all(len(ex.source) == length for ex in task.examples(20))
    else:
        with pytest.raises(DataError, match=f"length must be even and >= 2, got {length}"):
            parse_task(f"brackets:length={length}")


def test_letters_may_be_any_but_the_separator_and_newline():
    task = parse_task("copy:letters=aXb")
    assert set("".join(ex.source for ex in task.examples(30))) <= set("aXb")
    assert task.spec == "task:copy:letters=aXb"        # only booleans are written lower-case
    with pytest.raises(DataError, match=r"must not contain \['>'\]"):
        parse_task("copy:letters=a>b")
    with pytest.raises(DataError, match=r"must be non-empty and must not contain \['\(empty\)'\]"):
        parse_task("copy:letters=")


def _copy_sampler(batch_size=3, **kw):
    task = parse_task("copy")
    return TaskSampler(task, CharTokenizer(task.alphabet), batch_size, **kw)


def test_seq2seq_batch_of_nothing_is_refused():
    with pytest.raises(DataError, match=r"^seq2seq_batch needs at least one \(source, target\) "
                                        r"pair$"):
        seq2seq_batch([], CharTokenizer("ab"))


def test_task_sampler_counts_steps_and_resumes_at_them():
    sampler = _copy_sampler()
    assert sampler.state_dict()["step"] == 0
    batches = [sampler.next_examples() for _ in range(3)]
    assert sampler.state_dict()["step"] == 3
    assert batches[0] != batches[1] != batches[2]
    fresh = _copy_sampler(seed=0)
    assert fresh.next_examples() == batches[0]        # the default seed is 0
    resumed = _copy_sampler()
    resumed.load_state_dict({**sampler.state_dict(), "step": 2})
    assert resumed.next_examples() == batches[2]


def test_task_sampler_takes_one_row_and_refuses_none():
    assert len(_copy_sampler(batch_size=1).next_examples()) == 1
    with pytest.raises(DataError, match="^batch size must be at least 1, got 0$"):
        _copy_sampler(batch_size=0)


def test_task_sampler_seq2seq_batches_end_targets_with_eot():
    sampler = _copy_sampler(batch_size=2)
    tok = sampler.tokenizer
    examples = _copy_sampler(batch_size=2).next_examples()
    batch = sampler.next_seq2seq_batch()
    for row, ex in enumerate(examples):
        target = tok.encode(ex.target) + [tok.eot_id]
        assert batch.labels[row, :len(target)].tolist() == target
        assert batch.decoder_input[row, :len(target)].tolist() == [tok.bos_id] + target[:-1]
        assert batch.source[row, :len(ex.source)].tolist() == tok.encode(ex.source)
    assert sampler.state_dict()["step"] == 1


def test_task_sampler_resume_mismatch_names_both_tasks_and_sizes():
    saved = _copy_sampler(batch_size=4).state_dict()
    task = parse_task("reverse")
    other = TaskSampler(task, CharTokenizer(task.alphabet), 4)
    with pytest.raises(DataError, match=r"saved for task:copy with batch size 4, this one is "
                                        r"task:reverse with batch size 4"):
        other.load_state_dict(saved)


def test_eval_examples_are_a_fixed_held_out_stream_of_512():
    from tfstudio.data.task_batches import EVAL_SEED
    sampler = _copy_sampler(seed=3)
    held_out = sampler.eval_examples()
    assert len(held_out) == 512 and held_out == sampler.eval_examples()
    assert held_out[:20] == parse_task("copy").examples(20, seed=EVAL_SEED + 3)
    assert held_out[:20] != parse_task("copy").examples(20, seed=0)   # not the text corpus
    assert held_out[:20] != _copy_sampler(seed=4).eval_examples(20)


def test_letter_tasks_accept_single_letters_and_refuse_empty_strings():
    one = parse_task("copy:min_len=1,max_len=1")
    assert {len(ex.source) for ex in one.examples(20)} == {1}
    with pytest.raises(DataError, match=r"need 1 <= min_len <= max_len, got min_len=0, max_len=3"):
        parse_task("copy:min_len=0,max_len=3")


def test_a_task_sampler_makes_seq2seq_batches_of_its_next_examples():
    sampler, twin = _copy_sampler(seed=5), _copy_sampler(seed=5)
    batch = sampler.next_seq2seq_batch()
    tok = twin.tokenizer
    want = seq2seq_batch([(tok.encode(e.source), tok.encode(e.target))
                          for e in twin.next_examples()], tok)
    for name in ("source", "source_mask", "decoder_input", "labels"):
        assert np.array_equal(np.asarray(getattr(batch, name)), np.asarray(getattr(want, name)))
    assert sampler.step == 1


def test_task_lm_batch_is_as_wide_as_the_longest_line_less_one():
    tok = CharTokenizer("0123456789+=\n")
    examples = [TaskExample("1+2", "3", "="), TaskExample("10+20", "30", "=")]
    batch = task_lm_batch(examples, tok)
    assert tuple(batch.inputs.shape) == (2, len("10+20=30\n") - 1)
    assert batch.inputs.dtype == batch.targets.dtype == __import__("torch").long


def test_unknown_task_names_the_choices_and_a_value_may_hold_an_equals_sign():
    with pytest.raises(DataError, match=r"^unknown task 'nope'; choose one of ") as err:
        parse_task("nope")
    assert str(err.value).endswith(", ".join(TASKS))
    with pytest.raises(DataError, match=r"digits must be an integer, got '3=4'"):
        parse_task("add:digits=3=4")


def test_add_task_digits_range_and_operand_size():
    assert parse_task("add:digits=1").digits == 1
    assert parse_task("add:digits=18").digits == 18
    for bad in (0, 19):
        with pytest.raises(DataError, match=rf"^task 'add': digits must be 1..18, got {bad}$"):
            parse_task(f"add:digits={bad}")
    sources = [e.source for e in parse_task("add:digits=3").examples(200, seed=1)]
    biggest = max(max(int(x) for x in s.split("+")) for s in sources)
    assert biggest > 500  # operands range over 0..999


def test_task_examples_default_to_seed_0():
    task = parse_task("add")
    rng = random.Random(0)
    assert task.examples(5) == [task.example(rng) for _ in range(5)]


def test_letter_tasks_draw_their_strings_as_recorded_runs_drew_them():
    """A length from randint, then one ``choice`` per letter, from the sampler's seeded stream:
    the draws every recorded run and lesson record was trained on (``random.choices`` would give
    other strings from the same seed)."""
    sampler = TaskSampler(parse_task("induction"), build_tokenizer("byte"), batch_size=4, seed=7)
    rng = random.Random(f"{sampler.task.spec}|7|0")
    expected = []
    for _ in range(4):
        s = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(8, 16)))
        expected.append((s, s))
    assert [(e.source, e.target) for e in sampler.next_examples()] == expected
