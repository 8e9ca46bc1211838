"""How Explain follows the rest of the window, without Qt (gui/training/explain_links.py): the
switches naming the blocks selected on the canvas, the canvas's ablate action, the name of the
run whose weights it reads, the tokens head scores are measured on. In the window:
test_window.py."""
from __future__ import annotations

import string
from pathlib import Path
from types import SimpleNamespace

from tfstudio.data import build_tokenizer, load_corpus
from tfstudio.gui.training.explain_links import (ABLATE, ABLATED, ablate_text, blocks_to_ablate,
                                                 head_score_pool, run_label, toggled)
from tfstudio.gui.training.history import RunRecord


def test_canvas_blocks_name_their_explain_switches():
    offered = ["layers.0.attn", "layers.0.attn:head=1", "layers.0.ffn", "layers.1.attn",
               "layers.10.attn", "moe.2", "encoder.0.attn"]
    assert blocks_to_ablate(offered, ("layers",), ["attn"]) == ["layers.0.attn",
                                                               "layers.1.attn", "layers.10.attn"]
    assert blocks_to_ablate(offered, ("layers",), ["ffn", "norm"]) == ["layers.0.ffn"]
    assert blocks_to_ablate(offered, (), ["layers"]) == []  # a group is not one switch
    assert blocks_to_ablate(offered, ("encoder",), ["attn"]) == ["encoder.0.attn"]


def test_the_ablate_action_switches_the_selection_on_again_only_when_all_of_it_is_off():
    off = ["layers.0.attn", "layers.1.ffn"]
    assert ablate_text(["layers.0.attn"], off) == ABLATED
    assert ablate_text(["layers.0.attn", "layers.1.attn"], off) == ABLATE   # one still on
    assert ablate_text([], off) == ABLATE                                   # nothing chosen
    assert toggled(off, ["layers.0.attn", "layers.1.attn"]) == ["layers.1.attn", "layers.1.ffn"]
    assert toggled([], ["layers.1.attn", "layers.0.attn"]) == ["layers.0.attn", "layers.1.attn"]


def test_explain_names_the_run_as_runs_does_else_by_its_folder():
    viewed = SimpleNamespace(name="tiny-gpt · 09:41:03", path=Path("/runs/a"))
    records = [RunRecord("/runs/b", "tiny-llama", started="2026-11-29 10:00:00")]
    assert run_label(viewed) == "tiny-gpt · 09:41:03"
    assert run_label(viewed, "/runs/a") == "tiny-gpt · 09:41:03"
    assert run_label(viewed, "/runs/b", lambda: records) == "tiny-llama · 10:00:00"
    assert run_label(viewed, "/runs/c", lambda: records) == "c"
    assert run_label(SimpleNamespace(name="", path=Path("/runs/a"))) == "a"
    assert run_label(None) == ""


def test_head_scores_are_measured_on_the_letters_the_tokenizer_writes_as_one_token_each():
    letters = head_score_pool(build_tokenizer("byte"))
    assert len(letters) == 52 and letters[:3] == [ord("a"), ord("b"), ord("c")]
    reverse = build_tokenizer("char", corpus=load_corpus("task:reverse"))
    pool = head_score_pool(reverse)
    assert pool is not None and len(pool) == len(set(pool)) < 52   # its own alphabet only
    assert [reverse.decode([i]) for i in pool] == \
        [ch for ch in string.ascii_letters if ch in reverse.alphabet]
    digits = SimpleNamespace(encode=lambda ch: [0] if ch == "a" else [1, 2],
                             decode=lambda ids: "a")
    assert head_score_pool(digits) is None     # too few for a random sequence to repeat
