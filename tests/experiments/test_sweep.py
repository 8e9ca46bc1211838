"""The lr sweep (experiments.sweep): each variant's lr is the grid's best on the selection
split, the grid widens past a winning edge, the record covers every lesson variant, and the
lessons, ``compare --tune-lr`` and ``lesson --budget`` train at what it chose."""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from tfstudio.cli import main
from tfstudio.data import split_train_val
from tfstudio.experiments import sweep as lr_sweep
from tfstudio.experiments.lessons import LESSONS, lr_record, prepare
from tfstudio.experiments.lessons.budget import parse_budget
from tfstudio.experiments.lessons.cost import trainings
from tfstudio.experiments.lessons.measures import (far_seeds, far_seeds_sentence, late_slope,
                                                   order_sentence, order_settled,
                                                   still_learning_sentence)
from tfstudio.experiments.results import Comparison, RunResult, VariantResult
from tfstudio.experiments.runner import Plan
from tfstudio.experiments.variants import expand
from tfstudio.runs import TrainConfig


def bowl(best: float, diverge_above: float = math.inf):
    """A fake training: selection loss is the squared distance (in decades) from ``best``,
    plus a seed-sized wobble; inf (diverged) above ``diverge_above``."""
    def train(graph, config, tokenizer=None, corpus=None):
        if config.lr > diverge_above:
            return math.inf
        return (math.log10(config.lr) - math.log10(best)) ** 2 + 0.001 * config.seed
    return train


def run_sweep(best, **kw):
    return lr_sweep.sweep_variant("v", None, TrainConfig(steps=5), train=bowl(best, **kw))


def test_the_chosen_lr_is_the_grids_lowest_mean_selection_loss():
    s = run_sweep(0.01)
    assert s.grid == [1e-3, 3e-3, 1e-2, 3e-2]          # an inner best: nothing widened
    assert s.chosen_lr == 0.01 and s.at_edge() == "" and lr_sweep.edge_is_settled(s)
    # every lr over both seeds, and the two lowest means (0.01, then 0.03) over two more
    assert {p.lr: len(p.losses) for p in s.points} == {1e-3: 2, 3e-3: 2, 1e-2: 4, 3e-2: 4}


def test_a_best_lr_at_the_edge_widens_the_grid_until_it_is_inside():
    s = run_sweep(0.1)
    assert s.grid == [1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3]
    assert s.chosen_lr == 0.1 and s.at_edge() == ""
    low = run_sweep(1e-4)
    assert low.grid[:3] == [1e-4, 3e-4, 1e-3] and low.chosen_lr == 1e-4


def test_an_edge_still_winning_after_the_widest_grid_is_settled_only_then():
    s = run_sweep(10.0)
    assert s.grid[-1] == 0.3 and s.at_edge() == "high"    # widened twice, still the edge
    assert lr_sweep.edge_is_settled(s)
    unwidened = lr_sweep.VariantSweep("v", s.points[:4])  # the first grid only
    assert unwidened.at_edge() == "high" and not lr_sweep.edge_is_settled(unwidened)


def test_a_smaller_lr_within_one_standard_error_of_the_best_is_chosen():
    # the history record's GPT-2: 0.03 wins by 0.006 on two seeds whose spread is 0.013
    gpt2 = lr_sweep.VariantSweep("gpt2", [lr_sweep.LrPoint(0.01, [0.626, 0.626]),
                                          lr_sweep.LrPoint(0.03, [0.629, 0.611]),
                                          lr_sweep.LrPoint(0.1, [2.243, 2.370])])
    assert gpt2.best.lr == 0.03 and gpt2.chosen_lr == 0.01
    # the same win beyond one standard error (0.0092) keeps the larger lr
    clear = lr_sweep.VariantSweep("gpt2", [lr_sweep.LrPoint(0.01, [0.632, 0.632]),
                                           *gpt2.points[1:]])
    assert clear.chosen_lr == 0.03
    # seeds with no spread give no tolerance: the lowest mean wins, however close
    exact = lr_sweep.VariantSweep("w", [lr_sweep.LrPoint(0.03, [0.680, 0.680]),
                                        lr_sweep.LrPoint(0.1, [0.679, 0.679])])
    assert exact.chosen_lr == 0.1


def stalls_on(seed: int, lr: float, best: float = 0.03):
    """A fake training that wins at ``best`` on every seed but stalls (loss 2.2, the attention
    lesson's GQA at 0.03 on one seed in five) at ``lr`` on ``seed``."""
    def train(graph, config, tokenizer=None, corpus=None):
        if config.seed == seed and math.isclose(config.lr, lr):
            return 2.2
        return 0.62 + (math.log10(config.lr) - math.log10(best)) ** 2 / 10 + 0.001 * (
            config.seed % 2)
    return train


def test_an_lr_that_stalls_on_a_confirming_seed_loses_the_choice_it_won_on_two_seeds():
    calls = []

    def train(graph, config, tokenizer=None, corpus=None):
        calls.append((config.lr, config.seed))
        return stalls_on(101, 0.03)(graph, config)
    unconfirmed = lr_sweep.sweep_variant("gqa", None, TrainConfig(steps=5), confirm=(),
                                         train=train)
    assert unconfirmed.chosen_lr == 0.03 and not unconfirmed.confirmed
    del calls[:]
    s = lr_sweep.sweep_variant("gqa", None, TrainConfig(steps=5), train=train)
    # the two lowest means on seeds 1, 2 (0.03, then 0.01) train again on seeds no lesson trains
    assert sorted(calls[-4:]) == [(0.01, 101), (0.01, 102), (0.03, 101), (0.03, 102)]
    assert s.confirmed and [p.lr for p in s.candidates] == [0.01, 0.03]
    assert s.chosen_lr == 0.01 and s.best.lr == 0.01
    # a stall at an lr the choice never considers changes nothing
    quiet = lr_sweep.sweep_variant("gqa", None, TrainConfig(steps=5),
                                   train=stalls_on(101, 1e-3))
    assert quiet.chosen_lr == 0.03 and [p.lr for p in quiet.candidates] == [0.01, 0.03]


def test_a_confirmed_front_runner_at_the_grids_edge_widens_the_grid_on_every_seed():
    # 0.03, the grid's top, wins on seeds 1, 2, so the grid widens to 0.1; 0.03 then stalls on
    # seed 101 and 0.1, now the top edge, takes the lead: the grid widens past it on all four
    # seeds
    def train(graph, config, tokenizer=None, corpus=None):
        if config.seed == 101 and math.isclose(config.lr, 0.03):
            return 2.2
        return {1e-3: 1.5, 3e-3: 1.0, 1e-2: 0.8, 3e-2: 0.6, 0.1: 0.7, 0.3: 0.75,
                1.0: 3.0}[round(config.lr, 6)] + 0.001 * config.seed
    s = lr_sweep.sweep_variant("v", None, TrainConfig(steps=5), grid=(1e-3, 3e-3, 1e-2, 3e-2),
                               train=train)
    counts = {p.lr: len(p.losses) for p in s.points}
    assert counts[0.1] == 4 and counts[0.3] == 4        # confirmed, then widened on 4 seeds
    assert s.chosen_lr == 0.1 and s.at_edge() == "" and lr_sweep.edge_is_settled(s)


def test_resuming_a_recorded_sweep_trains_only_its_confirmation(tmp_path):
    record = tmp_path / "record.json"
    calls = []

    def train(graph, config, tokenizer=None, corpus=None):
        calls.append((config.lr, config.seed))
        return stalls_on(101, 0.01, best=0.006)(graph, config)   # an inner best
    lr_record.sweep_lesson("attention", steps=3, only=["attention=gqa"], path=record,
                           train=train, confirm=(), command="sweep")
    assert len(calls) == 8 and lr_record.chosen_lrs("attention", path=record)[0] == {
        "attention=gqa": 0.01}
    # orthogonality's learned positions: a twin of attention=mha, recorded as the same sweep
    lr_record.sweep_lesson("attention", steps=3, only=["attention=mha"], path=record,
                           train=bowl(0.01), confirm=())
    lr_record.sweep_lesson("orthogonality", steps=3, only=["positions=learned"],
                           path=record, train=bowl(0.01), confirm=())
    del calls[:]
    with pytest.raises(ValueError, match="resuming keeps the record's grid and steps"):
        lr_record.sweep_lesson("attention", steps=5, path=record, train=train, resume=True)
    lr_record.sweep_lesson("attention", steps=3, only=["attention=gqa"], path=record,
                           train=train, resume=True, command="confirm")
    assert sorted(calls) == [(0.003, 101), (0.003, 102), (0.01, 101), (0.01, 102)]
    item = lr_record.entry("attention", path=record)
    assert item["variants"]["attention=gqa"]["lr"] == 0.003 and item["command"] == "sweep"
    assert item["confirm_command"] == "confirm" and item["confirm_seeds"] == [101, 102]
    text = "\n".join(lr_record.markdown(record))
    assert "trained again on seeds 101, 102 (`confirm`" in text
    assert "(4 seeds)**" in text
    # the twin follows its source once the source is confirmed
    lr_record.sweep_lesson("attention", steps=3, only=["attention=mha"], path=record,
                           train=lambda g, c, t=None, k=None: stalls_on(102, 0.01,
                                                                        best=0.01)(g, c),
                           resume=True)
    assert lr_record.refresh_twins(record) == ["orthogonality positions=learned"]
    twin = lr_record.entry("orthogonality", path=record)["variants"]["positions=learned"]
    source = lr_record.entry("attention", path=record)["variants"]["attention=mha"]
    # (0.01 stalls on seed 102, so 0.03 is chosen)
    assert twin["points"] == source["points"] and twin["lr"] == source["lr"] == 0.03
    assert lr_record.refresh_twins(record) == []


def confirmed_sweep(faster: list[float]) -> lr_sweep.VariantSweep:
    """The experts record's moe-active: 0.003 chosen on 4 seeds, ``faster`` at 0.01."""
    return lr_sweep.VariantSweep("ffn_experts=moe-active", [
        lr_sweep.LrPoint(0.001, [1.909, 1.935, 1.894, 1.883]),
        lr_sweep.LrPoint(0.003, [1.195, 1.292, 1.175, 1.117]),
        lr_sweep.LrPoint(0.01, faster), lr_sweep.LrPoint(0.03, [2.1, 2.09])])


def test_a_faster_lr_that_some_seeds_ride_and_others_stall_at_is_named_from_the_record(
        tmp_path):
    unsteady = confirmed_sweep([0.610, 0.764, 1.589, 1.827])
    assert unsteady.chosen_lr == 0.003 and unsteady.unsteady_above().lr == 0.01
    # every seed slower at 0.01, or every seed faster (then 0.01 would be chosen): steady
    assert confirmed_sweep([1.3, 1.5, 1.589, 1.827]).unsteady_above() is None
    assert confirmed_sweep([0.61, 0.62, 0.63, 0.64]).chosen_lr == 0.01
    # seeds a little above the chosen mean are noise, not a stall
    assert confirmed_sweep([1.0, 1.25, 1.30, 1.40]).unsteady_above() is None
    record = tmp_path / "record.json"
    lr_record.save_variant("experts", 1, {"command": "c", "date": "d"}, unsteady.to_dict(),
                           record)
    text = lr_record.unsteady_sentence("experts", {"ffn_experts=moe-active": 0.003}, record)
    assert "ffn_experts=moe-active trains at 0.003 (selection loss 1.195 ± 0.073) because " \
           "at 0.01 its 4 sweep seeds ended at 0.610, 0.764, 1.589, 1.827: below 0.003's " \
           "mean on 2, 20% or more above it on 2" in text
    # a lesson trained at another lr than the record chose: the record says nothing of it
    assert lr_record.unsteady_sentence("experts", {"ffn_experts=moe-active": 0.01},
                                       record) == ""
    lr_record.save_variant("experts", 1, {"command": "c", "date": "d"},
                           confirmed_sweep([1.3, 1.5, 1.589, 1.827]).to_dict(), record)
    assert lr_record.unsteady_sentence("experts", {"ffn_experts=moe-active": 0.003},
                                       record) == ""


def test_the_table_bolds_the_chosen_lr_and_italicises_a_different_lowest_mean():
    gpt2 = lr_sweep.VariantSweep("gpt2", [lr_sweep.LrPoint(0.01, [0.626, 0.626]),
                                          lr_sweep.LrPoint(0.03, [0.629, 0.611])])
    row = lr_sweep.table([gpt2])[-1]
    assert "**0.626 ± 0.000**" in row and "*0.620 ± 0.013*" in row and row.endswith("| 0.01 |")


def test_every_recorded_lr_is_the_rules_choice_from_its_own_losses():
    for key, item in lr_record.load().items():
        for name, variant in item["variants"].items():
            assert variant["lr"] == lr_sweep.VariantSweep.from_dict(variant).chosen_lr, \
                f"{key} {name}"


def test_a_diverged_lr_never_wins():
    s = run_sweep(1.0, diverge_above=0.02)
    assert s.chosen_lr == 0.01 and s.points[-1].text() == "diverged"


def test_the_sweep_chooses_on_text_apart_from_the_validation_split_it_reports_on():
    tokens = np.arange(10_000)
    config = TrainConfig(val_fraction=0.1)
    swept = lr_sweep.selection_config(config, 0.01, 1)
    sweep_train, sweep_val = split_train_val(tokens, swept.val_fraction)
    chosen_on = lr_sweep.selection_tokens(sweep_val)
    _, reported_on = split_train_val(tokens, config.val_fraction)
    assert not set(chosen_on) & set(reported_on)
    assert not set(sweep_train) & (set(chosen_on) | set(reported_on))
    assert len(chosen_on) == len(reported_on) == 1000


def lesson_variants(name) -> dict[str, tuple[int, str]]:
    """Each training lesson ``name`` takes an lr for: {name: (its steps, what it starts
    from)}; a lesson that trains itself names them in ``Lesson.sweeps``."""
    lesson = LESSONS[name]
    if lesson.run is not None:
        assert lesson.sweeps is not None, f"{name} trains itself and names no training to sweep"
        return {t.name: (t.config.steps, t.start) for t in lesson.sweeps(None)}
    run = prepare(name)
    return {v.name: (run.config.steps, "") for v in expand(run.base, run.varies)}


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_every_lesson_variant_has_a_recorded_sweep_unless_listed_as_not_swept(name):
    item = lr_record.entry(name) or {"variants": {}}
    variants = lesson_variants(name)
    missing = [v for v in variants if v not in item["variants"]]
    if name in lr_record.NOT_SWEPT:
        assert missing, f"every variant of {name} is recorded: take it off NOT_SWEPT"
    else:
        assert not missing, f"{name}: no lr sweep recorded for {missing} (bench/sweep_lr.py)"
    if not item["variants"]:
        return
    assert len(item["seeds"]) >= 2 and item["steps"] == LESSONS[name].training["steps"]
    for variant, (steps, start) in variants.items():
        if variant not in item["variants"]:
            continue
        recorded = item["variants"][variant]
        assert lr_record.settings_of(item, recorded)["steps"] == steps, f"{name} {variant}"
        assert recorded.get("starts_from", "") == start, f"{name} {variant}"
        s = lr_sweep.VariantSweep.from_dict(recorded)
        assert len(s.grid) >= 4 and all(len(p.losses) >= 2 for p in s.points)
        ratios = [b / a for a, b in zip(s.grid, s.grid[1:])]
        assert all(2.5 < r < 3.7 for r in ratios), f"{name} {variant}: not log-spaced"
        assert lr_sweep.edge_is_settled(s), f"{name} {variant}: best lr at an unwidened edge"


def swept_lesson():
    return next(n for n, lesson in LESSONS.items() if lesson.run is None and lesson.varies
                and lr_record.entry(n))


def test_a_lesson_trains_each_variant_at_its_recorded_lr(tmp_path, capsys):
    name = swept_lesson()
    lrs, _ = lr_record.chosen_lrs(name)
    out = tmp_path / "l"
    assert main(["compare", "--lesson", name, "--steps", "3", "--seeds", "1",
                 "--print-commands", "--out", str(out)]) == 0
    plan = json.loads((out / "compare.json").read_text())
    commands = capsys.readouterr().out.splitlines()
    for variant in plan["variants"]:
        if variant["name"] not in lrs:       # not swept yet: the shared lr, said on its page
            assert "lr" not in variant
            continue
        lr = lrs[variant["name"]]
        assert variant["lr"] == lr
        line = next(c for c in commands if f"variants/{variant['slug']}.json" in c)
        # train leaves a setting at its default unwritten
        assert f"--lr {lr}" in line if lr != TrainConfig.lr else "--lr" not in line


def test_the_estimate_counts_each_variant_at_its_recorded_lr():
    lrs, _ = lr_record.chosen_lrs(swept_lesson())
    assert lrs
    for t in trainings(LESSONS[swept_lesson()]):
        if t.key in lrs:
            assert t.config.lr == lrs[t.key]


def test_budget_multiplies_a_lessons_steps_on_the_same_path(tmp_path, capsys):
    assert parse_budget("4x") == 4 and parse_budget("0.5") == 0.5
    assert prepare("attention", budget=4).config.steps == 4 * LESSONS["attention"].training[
        "steps"]
    from tfstudio.cli.lesson import run_lesson
    out = tmp_path / "b"
    assert run_lesson("attention", out, seeds=[1], steps=5, budget=4, print_only=True) == 0
    plan = json.loads((out / "compare.json").read_text())
    assert plan["config"]["steps"] == 20
    assert "--steps 20" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["x", "0", "-2x", "nanx"])
def test_a_bad_budget_is_refused_in_one_line(bad, tmp_path, capsys):
    assert main(["lesson", "attention", "--budget", bad, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--budget" in err[0]
    assert not (tmp_path / "o").exists()


def test_compare_tune_lr_trains_each_variant_at_its_own_swept_lr(tmp_path, monkeypatch,
                                                                 capsys):
    # a fake training whose best lr differs by variant: MQA's best 0.03, MHA's 0.01
    def train(graph, config, tokenizer=None, corpus=None):
        mqa = any(n.params.get("kv_heads") == 1 for _, n in graph.walk())
        return bowl(0.03 if mqa else 0.01)(graph, config)
    monkeypatch.setattr(lr_sweep, "train_one", train)
    out = tmp_path / "c"
    assert main(["compare", "tiny-gpt", "--vary", "attention=mha,mqa", "--steps", "2",
                 "--seeds", "1", "--tune-lr", "--print-commands", "--out", str(out)]) == 0
    plan = json.loads((out / "compare.json").read_text())
    assert {v["name"]: v["lr"] for v in plan["variants"]} == {"attention=mha": 0.01,
                                                              "attention=mqa": 0.03}
    commands = capsys.readouterr().out.splitlines()
    assert any("--lr 0.01" in c and "attention-mha" in c for c in commands)
    assert any("--lr 0.03" in c and "attention-mqa" in c for c in commands)
    assert "| attention=mqa |" in "\n".join(lr_sweep.saved_table(out))


def comparison(curves, counted=900_103, steps=400):
    config = TrainConfig(steps=steps, batch_size=16, seq_len=64)
    plan = Plan("tiny-gpt", [("k", list(curves))], [1, 2], config, [], [
        {"name": f"k={n}", "slug": n, "settings": []} for n in curves])
    variants = [VariantResult(f"k={n}", n, [RunResult(seed, "", 1, curve(seed), [], {}, 1.0)
                                           for seed in (1, 2)], 1.0, 1)
                for n, curve in curves.items()]
    return Comparison(None, plan, variants, {"trigram": 1.18}, None, [], counted)


def flat(seed):
    # noise with no trend: a fixed wobble (random noise would read "falling" 5% of the time,
    # the test's stated error rate)
    return [(s, 1.0 + 0.05 * math.sin(1.7 * s + seed)) for s in range(1, 401)]


def falling(seed):
    rng = random.Random(seed)
    return [(s, 2.0 - 0.002 * s + 0.05 * rng.gauss(0, 1)) for s in range(1, 401)]


def test_a_curve_still_falling_at_the_end_says_still_learning_and_a_flat_one_does_not():
    assert late_slope(falling(1))[1] < 0.05 and late_slope(flat(1))[1] > 0.05
    learning = still_learning_sentence(comparison({"a": falling, "b": flat}))
    assert learning.startswith("Still learning at step 400") and "k=a" in learning
    assert "k=b" not in learning
    assert "so the order may change with more steps" in learning
    alone = still_learning_sentence(comparison({"a": falling}))
    assert "so its loss may fall further with more steps" in alone and "order" not in alone
    settled = still_learning_sentence(comparison({"a": flat, "b": flat}))
    assert settled.startswith("Not learning any more at step 400")
    # more steps: four times what ran, in the words that run it
    assert learning.endswith("with more steps (--steps 1600).")       # a comparison
    at_lesson = comparison({"a": falling, "b": flat})
    at_lesson.plan.lesson = "attention"                                  # its own 400 steps
    assert still_learning_sentence(at_lesson).endswith("(--budget 4x).")
    longer = comparison({"a": falling, "b": flat}, steps=1600)
    longer.plan.lesson = "attention"
    assert "(--budget 16x)" in still_learning_sentence(longer)


def validated(curves: dict[str, list[float]]):
    """A comparison whose variant NAME has validation losses ``curves[NAME]`` at steps 50,
    100, ... (both seeds alike)."""
    c = comparison({n: flat for n in curves})
    for v in c.variants:
        for r in v.runs:
            r.val_curve = [(50 * (i + 1), x) for i, x in enumerate(curves[v.name[2:]])]
    return c


def test_the_order_settles_at_the_first_evaluation_after_its_last_change():
    # b leads until step 100, a passes it at 150 and stays ahead to 400
    c = validated({"a": [3.0, 2.5, 1.9, 1.7, 1.6, 1.5, 1.4, 1.3],
                   "b": [2.9, 2.4, 2.0, 1.8, 1.7, 1.6, 1.5, 1.4]})
    assert order_settled(c) == (150, 400, ("k=a", "k=b"))
    assert "settled at step 150 of 400 (the last change: k=a passed k=b)" in order_sentence(c)
    # the pass moved to the last evaluation: not settled
    late = validated({"a": [3.0, 2.5, 2.1, 1.9, 1.8, 1.7, 1.6, 1.3],
                      "b": [2.9, 2.4, 2.0, 1.8, 1.7, 1.6, 1.5, 1.4]})
    assert order_settled(late) == (400, 400, ("k=a", "k=b"))
    assert order_sentence(late).startswith("The order by mean validation loss had not "
                                           "settled by step 400")
    # never changed
    same = validated({"a": [2.0] * 8, "b": [2.5] * 8})
    assert order_settled(same) == (50, 400, None)
    assert "the same at every evaluation from step 50 to 400" in order_sentence(same)


def finals(losses: dict[str, list[float]]):
    """A comparison whose variant NAME's seeds 1, 2, ... end at ``losses[NAME]``."""
    c = comparison({n: flat for n in losses})
    for v in c.variants:
        v.runs = [RunResult(seed, "", 1, flat(seed), [(400, x)], {}, 1.0)
                  for seed, x in enumerate(losses[v.name[2:]], 1)]
    return c


def test_a_run_stalled_among_healthy_seeds_is_named_and_seeds_that_merely_vary_are_not():
    # the attention lesson's GQA at lr 0.03: seed 3 stalled at 2.215, its others 0.62-0.64
    c = finals({"gqa": [0.628, 0.631, 2.215, 0.624, 0.640],
                "mha": [0.640, 0.652, 0.628, 0.645, 0.636]})
    c.baselines = {}
    assert far_seeds(c) == [("k=gqa", 3, 2.215, 0.631)]
    text = far_seeds_sentence(c)
    assert "k=gqa seed 3 ended at 2.215 against its seeds' median 0.631. " in text
    c.baselines = {"unigram": 3.012, "bigram": 2.431, "trigram": 1.183}
    assert "k=gqa seed 3 ended at 2.215 against its seeds' median 0.631, near the bigram " \
           "counter's 2.431" in far_seeds_sentence(c)
    assert "rests partly on a run that trained unlike the others" in text
    # scale's 32-wide model: seeds spread widely (0.83, 0.99, 1.37), none apart from the rest
    assert far_seeds(finals({"w32": [0.836, 0.995, 1.37]})) == []
    # seeds that agree to the third decimal: a 1% difference is not far
    assert far_seeds(finals({"w": [0.680, 0.680, 0.687]})) == []
    assert far_seeds_sentence(finals({"w": [0.680, 0.680, 0.687]})) == ""
    # two seeds cannot single one out
    assert far_seeds(finals({"a": [0.6, 2.2]})) == []


def test_the_token_budget_is_computed_against_the_counted_training_split():
    text = comparison({"a": flat}).token_budget()
    assert "409,600 tokens" in text and "900,103" in text and "2.2x as many" in text
    assert "0.5x of it" in comparison({"a": flat}, counted=204_800).token_budget()


def test_the_lesson_says_where_its_lrs_come_from():
    from tfstudio.cli.lesson import lr_line
    name = swept_lesson()
    at_one = lr_line(prepare(name), 1)
    assert at_one.startswith(f"lesson {name}: each variant at its own lr from the recorded "
                             "sweep") and "none recorded at" not in at_one
    assert "swept at 1x, none recorded at 4x" in lr_line(prepare(name, budget=4), 4)
    bare = prepare(name)
    bare.lrs = {}
    assert "no lr sweep recorded; every variant trains at lr" in lr_line(bare, 1)


def test_benchmarks_doc_shows_the_recorded_sweeps_as_recorded():
    docs = Path(__file__).resolve().parents[2] / "docs" / "BENCHMARKS.md"
    section = lr_record.docs_section(docs.read_text(encoding="utf-8"))
    assert section == "\n".join(lr_record.markdown()).strip("\n"), \
        "run python bench/sweep_lr.py --table --write"


def test_tune_lr_on_a_synthetic_task_is_refused_in_one_line(tmp_path, capsys):
    assert main(["compare", "tiny-gpt", "--vary", "attention=mha,mqa", "--corpus",
                 "task:reverse", "--steps", "2", "--tune-lr", "--out", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--tune-lr chooses each lr on held-out text" in err[0]


def test_a_variant_that_fails_at_every_lr_is_named_not_given_an_lr():
    with pytest.raises(ValueError, match="v: no lr of the sweep"):
        run_sweep(1.0, diverge_above=0.0)


def test_a_folder_holding_a_variant_at_another_lr_is_refused(tmp_path):
    from tfstudio import load_graph
    from tfstudio.experiments.compare import plan_runs
    config = TrainConfig(steps=2)
    args = ("tiny-gpt", load_graph("tiny-gpt"), [("attention", ["mha", "mqa"])], [1], config,
            [], tmp_path)
    specs = plan_runs(*args, lrs={"attention=mqa": 0.03})
    assert {s.variant: s.config.lr for s in specs} == {"attention=mha": config.lr,
                                                      "attention=mqa": 0.03}
    plan_runs(*args, lrs={"attention=mqa": 0.03})          # the same lrs: the same comparison
    with pytest.raises(ValueError, match="holds attention=mqa trained at lr 0.03 \\(now 0.01\\)"):
        plan_runs(*args, lrs={"attention=mqa": 0.01})


def test_a_variant_already_swept_as_another_lessons_variant_takes_its_record(tmp_path):
    record = tmp_path / "record.json"
    calls = []

    def train(graph, config, tokenizer=None, corpus=None):
        calls.append(config.lr)
        return bowl(0.01)(graph, config)
    lr_record.sweep_lesson("attention", steps=3, only=["attention=mha"], path=record,
                           train=train)
    trained = len(calls)
    assert trained == 12                        # 4 lrs x 2 seeds, then 2 lrs x 2 more
    # orthogonality's learned positions are tiny-gpt as it is: attention=mha's very model
    lr_record.sweep_lesson("orthogonality", steps=3, only=["positions=learned"], path=record,
                           train=train)
    assert len(calls) == trained
    kept = lr_record.entry("orthogonality", path=record)["variants"]["positions=learned"]
    assert kept["same_as"] == "attention attention=mha" and kept["lr"] == 0.01
    # a different model trains
    lr_record.sweep_lesson("orthogonality", steps=3, only=["positions=sinusoidal"],
                           path=record, train=train)
    assert len(calls) == trained + 12
    # a different training (steps) does not take the record either
    lr_record.sweep_lesson("positions", steps=4, only=["positions=learned"], path=record,
                           train=train)
    assert len(calls) == trained + 24


def test_a_twin_of_a_twin_takes_the_source_sweep_whatever_the_record_order(tmp_path):
    record = tmp_path / "record.json"
    confirmed = {"lr": 0.01, "points": [{"lr": 0.01, "losses": [0.6, 0.6, 0.6, 0.6]}]}
    stale = {"lr": 0.03, "points": [{"lr": 0.03, "losses": [0.5, 0.5]}]}
    record.write_text(json.dumps({
        "a": {"variants": {"x": {"name": "x", "same_as": "m y", **stale}}},   # before m
        "m": {"variants": {"y": {"name": "y", "same_as": "z w", **stale}}},
        "z": {"confirm_seeds": [101, 102], "variants": {"w": {"name": "w", **confirmed}}}}))
    assert lr_record.refresh_twins(record) == ["a x", "m y"]
    kept = lr_record.load(record)
    assert kept["a"]["variants"]["x"]["lr"] == kept["m"]["variants"]["y"]["lr"] == 0.01
    assert kept["a"]["confirm_seeds"] == [101, 102]


def _record_variants(path: str, lesson: str, count: int, start_at: float) -> None:
    import time
    time.sleep(max(0.0, start_at - time.time()))        # both writers at once
    for i in range(count):
        lr_record.save_variant(lesson, 1, {"command": lesson, "date": "now"},
                               {"name": f"v{i}", "lr": 0.01, "points": []}, Path(path))


@pytest.mark.slow   # two processes started by spawn, then writing at the same moment
def test_two_sweeps_recording_at_once_keep_each_others_variants(tmp_path):
    import multiprocessing
    record = tmp_path / "record.json"
    context = multiprocessing.get_context("spawn")
    import time
    start_at = time.time() + 4                           # after both have started
    writers = [context.Process(target=_record_variants,
                               args=(str(record), lesson, 60, start_at))
               for lesson in ("attention", "norm")]
    for w in writers:
        w.start()
    for w in writers:
        w.join(60)
    assert [w.exitcode for w in writers] == [0, 0]
    kept = lr_record.load(record)
    assert {k: len(v["variants"]) for k, v in kept.items()} == {"attention": 60, "norm": 60}


def test_a_variant_swept_apart_keeps_its_own_command_and_leaves_the_entrys(tmp_path):
    record = tmp_path / "record.json"
    lr_record.sweep_lesson("attention", steps=3, only=["attention=mha"], path=record,
                           train=bowl(0.01), command="sweep attention")
    lr_record.sweep_lesson("attention", steps=3, only=["attention=mqa"], path=record,
                           train=bowl(0.01), command="sweep mqa apart")
    item = lr_record.entry("attention", path=record)
    assert item["command"] == "sweep attention"
    assert item["variants"]["attention=mqa"]["command"] == "sweep mqa apart"
    assert "command" not in item["variants"]["attention=mha"]
    text = "\n".join(lr_record.markdown(record))
    assert "`sweep attention`" in text and "attention=mqa was swept apart: `sweep mqa apart`" \
        in text


@pytest.mark.slow   # trains the fine-tunes' start, 3 steps on each of 2 seeds
def test_interpolations_short_model_keeps_its_twins_sweep_and_each_fine_tune_is_swept_from_it(
        tmp_path):
    from tfstudio.experiments.lessons.interpolation import TUNE_GRID, WAYS
    from tfstudio.runs import RunFolder
    record = tmp_path / "record.json"
    calls, starts = [], []

    def train(graph, config, tokenizer=None, corpus=None):
        calls.append(config)
        if config.init_from:     # the start's folder lasts only as long as the sweep
            start = RunFolder(config.init_from).config()
            starts.append((start.seed, start.lr, start.val_fraction))
        return bowl(0.01 if config.seq_len == 64 else 3e-4)(graph, config)
    # positions=rope is the interpolation lesson's short model, trained alike
    lr_record.sweep_lesson("positions", steps=3, only=["positions=rope"], path=record,
                           train=train, grid=list(LESSONS["interpolation"].sweeps(3)[0].grid),
                           confirm=())
    del calls[:]
    lr_record.sweep_lesson("interpolation", steps=3, path=record, train=train, confirm=())
    item = lr_record.entry("interpolation", path=record)
    short = item["variants"]["short"]
    assert short["same_as"] == "positions positions=rope" and short["lr"] == 0.01
    assert {c.seq_len for c in calls} == {256}           # the short model was not swept again
    # each way swept on its own grid, 2 seeds, at 256 tokens; 3e-4 is inner: nothing widened
    assert len(calls) == len(WAYS) * len(TUNE_GRID) * 2
    for way in WAYS:
        tune = item["variants"][f"tune-{way}"]
        assert tune["lr"] == 3e-4 and tune["starts_from"] == "short"
        assert lr_record.settings_of(item, tune) == {"steps": 1, "batch_size": 4,
                                                     "seq_len": 256, "grid": list(TUNE_GRID)}
    # each seed's fine-tunes start from that seed's short model, trained at its chosen lr on
    # the sweep's training split (so the selection split stays unseen)
    assert starts == [(c.seed, 0.01, 0.2) for c in calls]
    assert all(c.val_fraction == 0.2 for c in calls)
    assert lr_record.chosen_lrs("interpolation", path=record)[0] == {
        "short": 0.01, "tune-linear": 3e-4, "tune-none": 3e-4, "tune-ntk": 3e-4}
    table = "\n".join(lr_record.markdown(record))
    assert "Fine-tunes of short, each seed's runs starting from its model trained at its " \
           "chosen lr: 1 step of 4 x 256 tokens, grid 0.0001, 0.0003, 0.001, 0.003" in table
    # resumed, each way trains only its two lowest means on the confirming seeds, each run
    # from that seed's own start (trained once per seed)
    del calls[:], starts[:]
    lr_record.sweep_lesson("interpolation", path=record, train=train, resume=True)
    assert len(calls) == len(WAYS) * 2 * 2 and {c.seed for c in calls} == {101, 102}
    assert starts == [(c.seed, 0.01, 0.2) for c in calls]
    assert all(len(lr_record.entry("interpolation", path=record)["variants"][f"tune-{w}"][
        "points"][1]["losses"]) == 4 for w in WAYS)      # 3e-4, the best, on 4 seeds


def test_a_grid_for_a_lesson_that_sweeps_its_own_grids_is_refused(tmp_path):
    with pytest.raises(ValueError, match="sweeps each of its trainings on its own grid"):
        lr_record.sweep_lesson("interpolation", steps=3, grid=[0.01, 0.03],
                               path=tmp_path / "r.json", train=bowl(0.01))


def test_the_interpolation_lesson_trains_and_estimates_each_training_at_its_recorded_lr():
    from tfstudio.experiments.lessons.interpolation import recorded_lrs, trainings as planned
    lesson = LESSONS["interpolation"]
    lrs, same_as = recorded_lrs()
    recorded = lr_record.chosen_lrs("interpolation")[0]
    assert lrs == recorded and set(lrs) == {t.name for t in planned()}
    # the short model is the positions lesson's RoPE variant: its lr is that sweep's choice
    assert same_as["short"] == "positions positions=rope"
    assert lrs["short"] == lr_record.chosen_lrs("positions")[0]["positions=rope"]
    assert [t.config.lr for t in trainings(lesson)] == [lrs[t.name] for t in planned()]


@pytest.mark.slow   # trains the lesson: 2 steps, then 3 fine-tunes of 1 step
def test_the_interpolation_lesson_trains_each_run_at_its_lr_and_refuses_a_folder_at_another(
        tmp_path, capsys, monkeypatch):
    from tfstudio.experiments.lessons import interpolation
    from tfstudio.runs import RunFolder
    lrs, _ = interpolation.recorded_lrs()
    out = tmp_path / "i"
    assert main(["lesson", "interpolation", "--steps", "2", "--seeds", "1", "--out",
                 str(out)]) == 0
    for name, lr in lrs.items():
        assert RunFolder(out / "runs" / name / "seed-1").config().lr == lr, name
    printed = capsys.readouterr().out
    assert f"tune-ntk {lrs['tune-ntk']:g}" in next(
        x for x in printed.splitlines() if x.startswith("Trained with "))
    # the record moved: the runs in the folder were trained at other lrs
    monkeypatch.setattr(interpolation, "recorded_lrs",
                        lambda: ({**lrs, "short": lrs["short"] / 3}, {}))
    assert main(["lesson", "interpolation", "--steps", "2", "--seeds", "1", "--out",
                 str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith(f"seed-1 holds a run trained at lr {lrs['short']:g} (now "
                            f"{lrs['short'] / 3:g}); use another --out, or delete it to start "
                            "over")


def test_a_norm_lesson_folder_holding_its_own_lr_sweep_gets_a_report_with_no_tuned_table(
        tmp_path):
    """The norm lesson keeps its measure, lr_sweep.json (a 60-step sweep of each placement), in
    its folder; the course's report once read it as compare --tune-lr's sweep and died on it
    (KeyError 'variants', exit 3, at the course's seventh lesson)."""
    from tfstudio.experiments.lessons.norm import SWEEP_FILE as NORM_SWEEP
    (tmp_path / NORM_SWEEP).write_text(json.dumps({"steps": 60, "seed": 1, "losses": {}}))
    assert lr_sweep.SWEEP_FILE != NORM_SWEEP
    assert lr_sweep.saved_table(tmp_path) == []
