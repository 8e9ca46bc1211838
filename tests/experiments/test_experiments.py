"""tfstudio compare / eval / lessons: variants differ in exactly their switch, runs share data
and seeds, the report says what the run folders hold, and the measurements (loss per position,
n-gram baselines, KV cache bytes) agree with computations done here."""
import json
import math
import shlex
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tfstudio import compile_graph, load_graph
from tfstudio.cli import main
from tfstudio.data import eval_windows, load_corpus, token_array
from tfstudio.experiments import lengths
from tfstudio.experiments.baselines import ngram_cross_entropies
from tfstudio.experiments.inference import measure_inference
from tfstudio.experiments.scaling import apply_rope_scaling
from tfstudio.experiments.variants import VariantError, apply_setting, expand, parse_vary
from tfstudio.graph import graph_to_dict
from tfstudio.gui.layer_switches import rewrite
from tfstudio.runs import RunFolder, TrainConfig

TINY = ["--corpus", "sample", "--tokenizer", "char", "--steps", "30", "--seq-len", "32",
        "--batch-size", "8", "--lr", "3e-3", "--warmup-steps", "5"]


# ----------------------------------------------------------------------- the graph edits
def params_of(graph) -> dict:
    return {(path, node.id): dict(node.params) for path, node in graph.walk()}


def param_diff(a, b) -> dict:
    """{(path, id, param): (old, new)} over nodes present in both graphs."""
    pa, pb = params_of(a), params_of(b)
    out = {}
    for key in pa.keys() & pb.keys():
        for name in pa[key].keys() | pb[key].keys():
            if pa[key].get(name) != pb[key].get(name):
                out[key + (name,)] = (pa[key].get(name), pb[key].get(name))
    return out


def test_attention_and_heads_change_only_the_attention_blocks():
    base = load_graph("tiny-gpt")
    mqa = apply_setting(base, "attention", "mqa")
    assert param_diff(base, mqa) == {(("layers",), "attn", "kv_heads"): (4, 1)}
    assert params_of(base).keys() == params_of(mqa).keys()
    heads = apply_setting(base, "layers.attn.heads", "2")  # MHA stays MHA
    assert param_diff(base, heads) == {(("layers",), "attn", "heads"): (4, 2),
                                       (("layers",), "attn", "kv_heads"): (4, 2)}
    relu = apply_setting(base, "activation", "relu")
    assert param_diff(base, relu) == {(("layers",), "ffn", "activation"): ("gelu", "relu")}


def test_positions_variant_is_the_editors_switch():
    base = load_graph("tiny-gpt")
    rope = apply_setting(base, "positions", "rope")
    assert set(params_of(base)) - set(params_of(rope)) == {((), "pos")}  # the table is gone
    assert param_diff(base, rope) == {(("layers",), "attn", "position"): ("none", "rope")}
    assert [(e.src, e.dst) for e in rope.out_edges("embed")] == [("embed", "layers")]


def test_norm_variant_rewrites_every_layer_as_the_editor_switch_does():
    base = load_graph("tiny-gpt")
    post = apply_setting(base, "norm", "post")
    editor = rewrite(base.node("layers").subgraph, "placement", "post")
    assert graph_to_dict(post.node("layers").subgraph) == graph_to_dict(editor)
    outside = {k: v for k, v in params_of(post).items() if k[0] == ()}
    assert outside == {k: v for k, v in params_of(base).items() if k[0] == ()}


def test_vary_expands_every_combination_and_refuses_bad_keys():
    variants = expand(load_graph("tiny-llama"), [parse_vary("attention=mha,mqa"),
                                                 parse_vary("norm=pre,post")])
    assert [v.name for v in variants] == ["attention=mha, norm=pre", "attention=mha, norm=post",
                                          "attention=mqa, norm=pre", "attention=mqa, norm=post"]
    for bad, words in [(("colour", "red"), "unknown --vary key"),
                       (("attention", "mqq"), "attention takes mha, gqa, mqa"),
                       (("layers.attn.nope", "1"), "has no parameter 'nope'"),
                       (("layers.missing.heads", "2"), "no node 'missing'")]:
        with pytest.raises(VariantError, match=words):
            apply_setting(load_graph("tiny-gpt"), *bad)
    with pytest.raises(VariantError, match="KEY=v1,v2"):
        parse_vary("attention")


# ----------------------------------------------------------------------- a tiny comparison
# the tests reading it are one xdist group, so it is trained once
ON_THE_COMPARISON = pytest.mark.xdist_group("tiny-comparison")


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    status = main(["compare", "tiny-gpt", "--vary", "attention=mha,mqa", "--eval-lengths",
                   "32,64", "--out", str(out), *TINY])
    assert status == 0
    return out


def run_dirs(out: Path) -> dict[str, Path]:
    return {slug: out / "runs" / slug / "seed-1337" for slug in ("attention-mha",
                                                                "attention-mqa")}


@ON_THE_COMPARISON
@pytest.mark.slow
def test_variants_train_on_the_same_data_and_seed(comparison):
    mha, mqa = (RunFolder(p) for p in run_dirs(comparison).values())
    assert mha.config() == mqa.config()
    assert mha.tokenizer_path.read_bytes() == mqa.tokenizer_path.read_bytes()
    states = [json.loads((f.latest() / "state.json").read_text())["data"] for f in (mha, mqa)]
    assert states[0] == states[1] and states[0]["sampler"]["step"] == 30
    assert param_diff(mha.graph(), mqa.graph()) == {(("layers",), "attn", "kv_heads"): (4, 1)}


@ON_THE_COMPARISON
def test_running_again_skips_finished_variants(comparison, capsys):
    before = {p: p.stat().st_mtime_ns for p in comparison.glob("runs/*/*/checkpoints/LATEST")}
    assert len(before) == 2
    assert main(["compare", "tiny-gpt", "--vary", "attention=mha,mqa", "--eval-lengths",
                 "32,64", "--out", str(comparison), *TINY]) == 0
    assert "training" not in capsys.readouterr().err
    assert {p: p.stat().st_mtime_ns for p in before} == before


def report_rows(out: Path) -> dict[str, dict[str, str]]:
    lines = (out / "report.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| variant | seeds"))
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(header, cells))
    return rows


@ON_THE_COMPARISON
def test_report_numbers_are_those_of_the_run_folders(comparison):
    rows = report_rows(comparison)
    assert set(rows) == {"attention=mha", "attention=mqa"}
    kv_heads = {"attention=mha": 4, "attention=mqa": 1}
    for (name, row), run in zip(sorted(rows.items()), run_dirs(comparison).values()):
        records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
        final = [r["val_loss"] for r in records if r["kind"] == "EvalMetrics"][-1]
        assert row["final val loss"] == f"{final:.3f}"
        model = RunFolder(run).load_model()
        assert row["parameters"] == f"{sum(p.numel() for p in model.parameters()):,}"
        # 2 layers x (K and V) x kv heads x head size 16 x 4 bytes (float32), per token
        per_token = 2 * 2 * kv_heads[name] * 16 * 4
        assert row["KV bytes/token (float32)"] == f"{per_token:,}"
        kib = f"{per_token * 32 / 1024:.1f} KiB"
        assert row["KV at context (measured / model)"] == f"{kib} / {kib} (float32)"
    page = (comparison / "report.html").read_text()
    for picture in ("loss_curves", "loss_vs_position", "loss_vs_params"):
        assert f"plots/{picture}.png" in page
        assert (comparison / "plots" / f"{picture}.png").stat().st_size > 10_000


def validation_split(run: Path) -> np.ndarray:
    config = RunFolder(run).config()
    tokens = np.asarray(token_array(load_corpus(config.corpus), RunFolder(run).tokenizer()))
    cut = len(tokens) - int(round(len(tokens) * config.val_fraction))
    return tokens, cut


@ON_THE_COMPARISON
def test_eval_loss_per_bucket_matches_a_direct_computation(comparison, capsys):
    run = run_dirs(comparison)["attention-mha"]
    assert main(["eval", str(run), "--lengths", "32,64"]) == 0
    printed = capsys.readouterr().out
    assert "positions       32-63:" in printed and "positions         0-7:" in printed
    saved = lengths.load(run / "lengths.json")
    tokens, cut = validation_split(run)
    model = RunFolder(run).load_model()
    losses = []
    with torch.no_grad():
        for x, y in eval_windows(tokens[cut:], 64, 8, 8):
            for row in range(x.shape[0]):
                logp = F.log_softmax(model(x[row:row + 1])[0].double(), dim=-1)
                losses.append([-logp[t, y[row, t]].item() for t in range(64)])
    losses = np.array(losses)
    assert saved.windows == len(losses)
    # trained on 32 tokens: positions 0-7 are the warm-up, averaged apart
    assert saved.warmup == 8 and saved.bucket_names() == ["8-31", "32-63"]
    assert saved.warmup_loss == pytest.approx(losses[:, :8].mean(), abs=1e-4)
    assert saved.buckets == pytest.approx([losses[:, 8:32].mean(), losses[:, 32:].mean()],
                                          abs=1e-4)


def test_a_learned_table_reports_how_far_it_goes():
    graph = apply_setting(load_graph("tiny-gpt"), "pos.max_len", "80")
    model = compile_graph(graph).eval()
    tokens = np.arange(2000) % 200
    result = lengths.evaluate_model(model, graph, tokens, 64, [32, 64, 96], max_windows=8)
    assert None not in result.buckets[:2] and result.buckets[2] is None
    assert result.limit == 80 and result.notes == ["learned positions: cannot go past 80"]
    assert len(result.per_position) == 80


def witten_bell_bigram(train: list[int], val: list[int], vocab: int) -> tuple[float, float]:
    """(unigram, bigram) cross-entropy on val[2:], counted here with Counters."""
    unigram = Counter(train)
    pairs = Counter(zip(train, train[1:]))
    context = Counter(train[:-1])
    followers = Counter(a for a, _ in pairs)
    uni, bi = [], []
    for a, b in zip(val[1:-1], val[2:]):
        p1 = (unigram[b] + 1) / (len(train) + vocab)
        n, u = context[a], followers[a]
        p2 = (pairs[(a, b)] + u * p1) / (n + u) if n else p1
        uni.append(-math.log(p1))
        bi.append(-math.log(p2))
    return sum(uni) / len(uni), sum(bi) / len(bi)


@ON_THE_COMPARISON
def test_bigram_baseline_is_a_count_over_the_training_split(comparison):
    run = run_dirs(comparison)["attention-mha"]
    tokens, cut = validation_split(run)
    vocab = RunFolder(run).tokenizer().vocab_size
    train, val = tokens[:cut].tolist(), tokens[cut:].tolist()
    unigram, bigram = witten_bell_bigram(train, val, vocab)
    found = ngram_cross_entropies(tokens[:cut], tokens[cut:], vocab)
    assert found["unigram"] == pytest.approx(unigram, rel=1e-9)
    assert found["bigram"] == pytest.approx(bigram, rel=1e-9)
    assert found["trigram"] < found["bigram"] < found["unigram"]
    report = (comparison / "report.md").read_text()
    assert f"| {unigram:.3f} | {bigram:.3f} | {found['trigram']:.3f} |" in report


def test_kv_cache_measured_shrinks_4_2_1():
    measured = {}
    for kind in ("mha", "gqa", "mqa"):
        graph = apply_setting(load_graph("tiny-gpt"), "attention", kind)
        cost = measure_inference(compile_graph(graph).eval(), graph, 24)
        assert cost.kv_bytes_measured == cost.kv_bytes_predicted
        assert cost.tokens_per_s > 0
        measured[kind] = cost.kv_bytes_measured
    assert measured == {"mha": 4 * measured["mqa"], "gqa": 2 * measured["mqa"],
                        "mqa": 2 * 2 * 1 * 16 * 4 * 24}


# ----------------------------------------------------------------------- a scheduler's way
def test_printed_commands_train_and_report_collects(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["compare", "tiny-gpt", "--vary", "positions=rope,alibi", "--out", str(out),
                 "--print-commands", *TINY[:5], "8", *TINY[6:]]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("tfstudio train ") for line in lines)
    args = shlex.split(lines[0])[1:]
    assert args[args.index("--out") + 1] == str(out / "runs" / "positions-rope" / "seed-1337")
    assert main(args) == 0                         # what a cluster job would run
    assert main(["compare", "--report", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert "positions=rope" in report and "1 run(s) not finished yet" in report
    assert "positions=alibi" not in report.split("## Counting")[0].split("|---|")[1]


def test_user_errors_are_one_line_and_exit_2(tmp_path, capsys):
    cases = [["compare", "tiny-gpt", "--vary", "colour=red", "--out", str(tmp_path / "a")],
             ["compare", "tiny-gpt", "--vary", "attention=mha", "--eval-lengths", "64,32",
              "--out", str(tmp_path / "b")],
             ["compare", "tiny-gpt", "--vary", "attention=mha"],
             ["compare", "--report", str(tmp_path)],
             ["compare", "tiny-gpt", "--vary", "norm=post", "--tokenizer", "bpe:x", "--out",
              str(tmp_path / "c")],
             ["eval", str(tmp_path)]]
    for argv in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"tfstudio {argv[0]}: "), err


# ----------------------------------------------------------------------- RoPE scaling
def test_rope_scaling_sets_only_rope_attention():
    graph = load_graph("tiny-llama")
    scaled = apply_rope_scaling(graph, 4.0)
    assert param_diff(graph, scaled) == {(("layers",), "attn", "rope_scaling"): (None, 4.0)}
    with pytest.raises(ValueError, match="has none"):
        apply_rope_scaling(load_graph("tiny-gpt"), 2.0)
    with pytest.raises(ValueError, match="at least 1"):
        apply_rope_scaling(graph, 0.5)
    ntk = apply_rope_scaling(graph, 2.0, "ntk")
    assert param_diff(graph, ntk) == {(("layers",), "attn", "rope_scaling"): (None, 2.0),
                                      (("layers",), "attn", "rope_scaling_type"): (None, "ntk")}


def test_train_extends_a_run_with_rope_scaling_from_the_command_line(tmp_path):
    from tfstudio.cli import main
    tiny = ["--corpus", "sample:small", "--tokenizer", "char", "--steps", "2", "--batch-size",
            "2", "--eval-every", "0", "--warmup-steps", "1"]
    short, long = tmp_path / "short", tmp_path / "long"
    assert main(["train", "tiny-llama", "--seq-len", "16", "--out", str(short), *tiny]) == 0
    assert main(["train", str(short / "graph.json"), "--init-from", str(short), "--seq-len",
                 "32", "--rope-scaling", "2", "--rope-scaling-type", "ntk", "--out", str(long),
                 *tiny]) == 0
    attn = RunFolder(long).graph().node("layers").subgraph.node("attn")
    assert attn.params["rope_scaling"] == 2.0 and attn.params["rope_scaling_type"] == "ntk"


@pytest.mark.slow
def test_position_interpolation_then_a_short_fine_tune_recovers_long_contexts(tmp_path):
    from tfstudio.train.trainer import Trainer

    short, long = tmp_path / "short", tmp_path / "long"
    config = TrainConfig(corpus="sample", tokenizer="char", steps=150, seq_len=32, batch_size=8,
                         lr=3e-3, warmup_steps=10, eval_every=0)
    assert Trainer(load_graph("tiny-llama"), config, run_dir=short).run().kind == "Finished"
    buckets = [32, 64, 96, 128]
    trained = lengths.evaluate_run(short, buckets, max_windows=16).buckets
    scaled = lengths.evaluate_run(short, buckets, rope_scaling=4.0, max_windows=16).buckets
    assert scaled[0] > trained[0]  # squeezed angles: worse where the model used to be good
    # the command line's `train RUN/graph.json --init-from RUN --seq-len 128 --rope-scaling 4`
    graph = apply_rope_scaling(RunFolder(short).graph(), 4.0)
    tune = TrainConfig.from_dict({**config.to_dict(), "seq_len": 128, "steps": 40,
                                  "init_from": str(short)})
    assert Trainer(graph, tune, run_dir=long).run().kind == "Finished"
    recovered = lengths.evaluate_run(long, buckets, max_windows=16).buckets
    assert recovered[3] < trained[3] and recovered[3] < scaled[3]
    assert recovered[0] < scaled[0]


@pytest.mark.slow
def test_jobs_train_seeds_as_local_processes_and_the_report_gives_their_spread(tmp_path):
    out = tmp_path / "jobs"
    assert main(["compare", "tiny-gpt", "--vary", "attention=mqa", "--seeds", "1,2", "--jobs",
                 "2", "--out", str(out), *TINY[:5], "6", *TINY[6:]]) == 0
    finals = []
    for seed in (1, 2):
        run = out / "runs" / "attention-mqa" / f"seed-{seed}"
        assert RunFolder(run).config().seed == seed and (run / "train.log").exists()
        records = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
        finals.append([r["val_loss"] for r in records if r["kind"] == "EvalMetrics"][-1])
    mean, spread = sum(finals) / 2, abs(finals[0] - finals[1]) / math.sqrt(2)
    assert report_rows(out)["attention=mqa"]["final val loss"] == f"{mean:.3f} ± {spread:.3f}"
