"""How Explain follows the rest of the window, without Qt (gui/training/explain_links.py): the
switches naming the blocks selected on the canvas, the canvas's ablate action, the name of the
run whose weights it reads, the tokens head scores are measured on. In the window:
test_window.py."""
from __future__ import annotations

import string
from pathlib import Path
from types import SimpleNamespace

from tfstudio.data import build_tokenizer, load_corpus
from tfstudio.gui.training.explain_links import (ABLATE, ABLATED, ablate_text, block_node,
                                                 blocks_to_ablate, head_score_pool, lit_node,
                                                 run_label, stage_for_block, toggled)
from tfstudio.gui.training.history import RunRecord


def test_block_node_drops_copy_indices():
    assert block_node("layers.1.attn") == (("layers",), "attn")
    assert block_node("embed") == ((), "embed")
    assert block_node("decoder.0.cross") == (("decoder",), "cross")


def test_a_stage_lights_its_block_or_the_group_holding_it_on_the_canvas():
    assert lit_node((), "layers.1.attn") == "layers"              # the level above: its group
    assert lit_node(("layers",), "layers.1.attn") == "attn"
    assert lit_node((), "embed") == "embed"
    assert lit_node(("encoder",), "layers.1.attn") is None        # another group shown
    assert lit_node((), "") is None                               # sampling: no block


BLOCKS = ["embed", "embed", "layers.0.attn", "layers.0.attn", "layers.0.ffn",
          "layers.1.attn", "layers.1.ffn", "final_norm", ""]


def test_a_block_clicked_on_the_canvas_explains_its_first_stage_in_the_layer_shown():
    assert stage_for_block(BLOCKS, 0, ("layers",), ["ffn"]) == 4        # the first copy
    assert stage_for_block(BLOCKS, 5, ("layers",), ["ffn"]) == 6        # the layer shown
    assert stage_for_block(BLOCKS, 2, ("layers",), ["attn"]) is None    # already shown
    assert stage_for_block(BLOCKS, 0, (), ["layers"]) == 2              # a group: inside it
    assert stage_for_block(BLOCKS, 0, (), ["final_norm"]) == 7
    assert stage_for_block(BLOCKS, 0, (), ["tokens"]) is None           # nothing walked of it
    assert stage_for_block(BLOCKS, 0, ("layers",), ["attn", "ffn"]) is None  # one block only
    assert stage_for_block([], -1, (), ["embed"]) is None


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
