"""The trained weights in the Train workspace, without Qt (gui/training/generation.py, driven
here through a panel and a model host that answer at once): what Generate refuses, the text it
streams, which answer the next-token chart takes and how its candidates are named. With the
real widgets and weights: test_training.py, test_what_is_shown.py."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tfstudio.data import build_tokenizer, load_corpus
from tfstudio.data.tokenizer import UNK
from tfstudio.gui.training.generation import GenerationController

TASK = build_tokenizer("char", corpus=load_corpus("task:reverse"))


class NextToken:
    """What the controller tells the next-token view."""

    def __init__(self):
        self.told: list = []
        self.settings = (0.8, 5, 0.9)

    def __getattr__(self, name):
        return lambda *args: self.told.append((name, *args))


class Host:
    def __init__(self, tokenizer=None, run_dir=None):
        self.tokenizer, self.run_dir = tokenizer, run_dir
        self.asked: list = []

    @property
    def ready(self) -> bool:
        return self.tokenizer is not None

    def generate(self, prompt, new_tokens, t, k, p, progress, done, failed):
        self.asked.append((prompt, new_tokens, t, k, p))
        for ids in ([TASK.encode("c")[0]], [TASK.encode("b")[0], TASK.eot_id]):
            progress(ids)
        done("done")

    def next_logits(self, prompt, show, failed):
        self.asked.append(prompt)
        self.answer = show


def controller(host: Host, viewed=None):
    said = []
    panel = SimpleNamespace(host=host, next_token=NextToken(), message=said.append,
                            said=said, viewed=viewed, _job_failed=said.append,
                            view_caption=lambda view: f"tiny-gpt · 04:28:00 ({view})")
    return GenerationController(panel), panel


def test_generate_asks_for_trained_weights_and_a_prompt():
    generation, panel = controller(Host())
    generation.generate("abc>", 20)
    assert panel.said == ["Generation uses trained weights: finish a run or open a past one"]
    generation, panel = controller(Host(TASK))
    generation.generate("", 20)
    assert panel.said == ["Type a prompt to continue first"] and not panel.host.asked


def test_generated_text_streams_decoded_whole_without_its_end_token():
    generation, panel = controller(Host(TASK))
    generation.generate("abc>", 20)
    assert panel.host.asked == [("abc>", 20, 0.8, 5, 0.9)]     # the sliders' settings
    assert panel.next_token.told == [("generation_started", "abc>"), ("show_generated", "c"),
                                     ("show_generated", "cb"), ("generation_finished",)]


def test_the_chart_takes_the_answer_of_the_weights_still_loaded_only():
    host = Host(TASK, Path("/runs/a"))
    generation, panel = controller(host)
    generation.prompt_edited("abc>")
    assert host.asked == ["abc>"]
    host.run_dir = Path("/runs/b")                 # another run opened meanwhile
    host.answer([0.1, 0.9])
    assert panel.next_token.told == []             # its answer is dropped
    generation.prompt_edited("abc>")
    host.answer([0.2, 0.8])
    (name, logits, _decode, source), = panel.next_token.told
    assert (name, logits) == ("set_logits", [0.2, 0.8])
    assert source == "tiny-gpt · 04:28:00 (next_token) · after your prompt"
    generation.prompt_edited("")                   # nothing typed: nothing asked
    controller(Host())[0].prompt_edited("abc>")    # no weights: nothing asked
    assert host.asked == ["abc>", "abc>"]


def test_the_charts_candidates_are_named_as_tokens_the_unknown_one_by_its_name():
    decode = controller(Host(TASK))[0].decoder()
    assert decode(TASK.encode("a")[0]) == "a"
    assert decode(TASK.unk_id) == UNK              # not U+FFFD, which names no token
    assert controller(Host())[0].decoder() is str  # no weights and no run: ids as they are
