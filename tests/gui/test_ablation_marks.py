"""Which blocks Explain's switches mark as off at the level shown, and their words, without a
window (gui/ablation_marks.py): a block shows its own switches from every copy of its group,
an open group those of the blocks inside; "off" when one switch takes the whole block, "part
off" for heads or experts only."""
from tfstudio.gui.ablation_marks import ablated_tip, badge_text, marks_at, whole

SWITCHES = ["layers.0.attn", "layers.1.attn:head=0", "layers.1.ffn:expert=2", "embed"]


def test_at_the_top_a_group_shows_the_switches_of_the_blocks_inside_from_every_copy():
    marks = marks_at(SWITCHES, ())
    assert marks["embed"].own == ["embed"] and not marks["embed"].inner
    layers = marks["layers"]
    assert layers.own == []                                      # the group itself is on
    assert layers.inner == {"attn": ["layers.0.attn", "layers.1.attn:head=0"],
                            "ffn": ["layers.1.ffn:expert=2"]}
    assert set(marks) == {"embed", "layers"}


def test_inside_a_group_each_block_shows_its_own_switches_from_every_copy():
    marks = marks_at(SWITCHES, ("layers",))
    assert marks["attn"].own == ["layers.0.attn", "layers.1.attn:head=0"]
    assert marks["ffn"].own == ["layers.1.ffn:expert=2"]
    assert "embed" not in marks                                  # another level's block
    assert marks_at(SWITCHES, ("decoder",)) == {}                # another group's inside


def test_a_whole_block_reads_off_and_only_heads_or_experts_read_part_off():
    assert whole(["layers.0.attn", "layers.1.attn:head=0"])
    assert badge_text(["layers.0.attn", "layers.1.attn:head=0"]) == "off"
    assert not whole(["layers.1.attn:head=0"])
    assert badge_text(["layers.1.attn:head=0", "layers.1.ffn:expert=2"]) == "part off"


def test_the_tooltip_names_the_switches_and_how_to_switch_them_back_on():
    tip = ablated_tip(["layers.0.attn", "layers.1.attn:head=0"])
    assert "Switched off in Explain (ablated):</b> layers.0.attn, layers.1.attn:head=0." in tip
    assert "Right-click the block" in tip and "Ablation tab" in tip
    assert "&lt;b&gt;" in ablated_tip(["<b>"])                    # a name is text, not markup
