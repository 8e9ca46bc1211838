"""What the next-token view writes, without Qt (gui/training/next_token_lines.py): its sliders'
values, the line under the chart, the chart's top and each candidate's label; the view that shows
them (and the probabilities its bars draw): test_training.py."""
from __future__ import annotations

from types import SimpleNamespace

from tfstudio.gui.training.next_token_lines import (ENCODER_NO_GENERATION, answer_prompt, bars,
                                                    chart_top, chart_x_range, drawable,
                                                    from_sliders, generation_offer,
                                                    live_source, prompt_html, to_sliders,
                                                    prompt_for_loaded_weights, setting_labels,
                                                    summary_line, takes_prompt, tick_label)


def test_the_sliders_say_greedy_and_off_where_a_setting_does_nothing():
    assert setting_labels(0.7, 5, 0.9) == ("0.70", "5", "0.90")
    assert setting_labels(0.0, 0, 1.0) == ("0.00 (greedy)", "off", "off")
    assert setting_labels(1.0, 1, 0.99) == ("1.00", "1", "0.99")


def test_the_summary_counts_what_sampling_can_draw_and_the_chart_top_moves_in_steps():
    assert summary_line(3, 65, 0.912).startswith("3 of 65 tokens can be drawn · entropy 0.91 nats")
    assert summary_line(65, 65, 4.17).startswith("65 of 65 tokens can be drawn · entropy 4.17")
    assert [chart_top(h) for h in ([0.02], [0.09], [0.091, 0.01], [0.3], [0.46], [0.8])] == \
        [0.1, 0.1, 0.2, 0.5, 1.0, 1.0]
    assert chart_top([]) == 1.0                  # nothing drawn: the whole probability range


def test_a_special_tokens_bar_label_names_it_whole_when_it_fits():
    from tfstudio.data.tokenizer import BOS, EOT, MASK, PAD

    assert [tick_label(t) for t in (MASK, PAD, BOS)] == ["⟨mask⟩", "⟨pad⟩", "⟨bos⟩"]
    assert tick_label(EOT) == "⟨end⟩"          # endoftext: nine letters, cut to three
    assert tick_label("hello") == "hel…" and tick_label("ab") == "ab"


def test_a_tasks_prompt_stops_after_its_separator_so_the_next_token_is_the_answers_first():
    assert answer_prompt("abc>cba", ">") == "abc>"
    assert answer_prompt("ab>c>d", ">") == "ab>"           # the first separator
    assert answer_prompt("abc", ">") == "abc"              # none in it: the whole text
    assert answer_prompt("Once upon a time", None) == "Once upon a time"  # a text corpus


def test_loaded_weights_replace_the_prompt_only_when_it_is_not_the_users_own():
    assert prompt_for_loaded_weights("", "abc>cba") == "abc>cba"          # an empty box
    assert prompt_for_loaded_weights("abc>cba", "abc>cba") == "abc>cba"   # the look's text
    assert prompt_for_loaded_weights("Once", "abc>cba") is None           # the user's own
    assert prompt_for_loaded_weights("abc>", "abc>cba") is None           # (a cut one too)


def test_generate_is_offered_to_every_family_but_a_masked_lm_encoder_which_says_why():
    assert generation_offer("decoder") == (True, "")
    assert generation_offer("encoder-decoder") == (True, "")
    assert generation_offer("encoder") == (False, ENCODER_NO_GENERATION)
    assert "masked-LM encoder" in ENCODER_NO_GENERATION


def test_a_filtered_candidate_is_hatched_at_its_tempered_height_and_cannot_be_drawn():
    def candidate(text, tempered, final, filtered_by=""):
        return SimpleNamespace(text=text, prob_tempered=tempered, prob_final=final,
                               filtered_by=filtered_by)
    candidates = [candidate("a", 0.5, 0.625), candidate("b", 0.3, 0.375),
                  candidate("c", 0.2, 0.0, "top-k")]
    drawn = bars(candidates)
    assert [list(v) for v in drawn["outlined"]] == [[0, 1, 2], [0.5, 0.3, 0.2]]
    assert [list(v) for v in drawn["filled"]] == [[0, 1], [0.625, 0.375]]
    assert [list(v) for v in drawn["hatched"]] == [[2], [0.2]]
    assert drawable(candidates) == [("a", 0.625), ("b", 0.375)]
    assert [list(v) for v in bars([])["filled"]] == [[], []]     # no prediction: no bars


def test_the_prompt_box_is_set_only_to_a_new_text_and_never_under_the_users_typing():
    assert takes_prompt("abc>cba", "abc>", typing=False)
    assert not takes_prompt("abc>cba", "abc>", typing=True)    # the user is in the box
    assert not takes_prompt("abc>", "abc>", typing=False)      # the same text: left alone


def test_a_live_looks_chart_says_its_prompt_is_the_probe_text_and_when_it_was_read():
    assert live_source("at step 40") == ("What comes after the probe text, at step 40 (during "
                                         "training the prompt is the probe text; Enter sets it)")


def test_the_sliders_count_temperature_and_top_p_in_hundredths():
    assert from_sliders(70, 5, 95) == (0.7, 5, 0.95)
    assert to_sliders(0.7, 5, 0.95) == (70, 5, 95)
    assert to_sliders(1.234, None, None) == (123, None, None)      # the others stay
    assert from_sliders(*to_sliders(0.0, 0, 1.0)) == (0.0, 0, 1.0)


def test_the_chart_keeps_each_bar_whole_and_one_bars_room_when_empty():
    assert chart_x_range(12) == (-0.6, 11.6)
    assert chart_x_range(1) == chart_x_range(0) == (-0.6, 0.6)


def test_the_prompt_heads_the_generated_text_muted_with_its_markup_and_lines_as_typed():
    assert prompt_html("a<b> & c\nd", "#888888") == \
        "<span style='color:#888888'>a&lt;b&gt; &amp; c<br>d</span>"
