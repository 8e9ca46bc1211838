"""The Hugging Face reader's norm placement is graph/placement.py's: every placement a layer can
have reads the same in both, and only the two stock ones (pre, post) are exported."""
from __future__ import annotations

import pytest

from tfstudio.export import ExportRefused
from tfstudio.export.anatomy import STOCK_PLACEMENTS, read_anatomy
from tfstudio.graph.kinds import PLACEMENT_NAMES, PLACEMENTS, POST, PRE
from tfstudio.graph.placement import identify_placement
from tfstudio.graph.templates import transformer_lm


def model(placement: str):
    return transformer_lm(name="t", description="", vocab=64, d_model=32, layers=2, heads=2,
                          d_ff=64, placement=placement)


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_the_exporter_reads_the_placement_the_layer_has(placement):
    graph = model(placement)
    (layer,) = [n for n in graph if n.is_group]
    assert identify_placement(layer.subgraph) == placement
    if placement in STOCK_PLACEMENTS:
        assert read_anatomy(graph).placement == placement
    else:
        with pytest.raises(ExportRefused) as refused:
            read_anatomy(graph)
        assert PLACEMENT_NAMES[placement] in str(refused.value)


def test_a_norm_after_the_last_add_closes_a_pre_norm_stack_and_is_part_of_a_post_norm_one():
    pre, post = read_anatomy(model(PRE)), read_anatomy(model(POST))
    assert pre.final_norm is not None and pre.final_norm.node.id == "final_norm"
    assert post.final_norm is None
    assert all(layer.norm2 is not None for layer in post.layers)
