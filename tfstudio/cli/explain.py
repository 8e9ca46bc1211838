"""``tfstudio explain RUN --text "..." [--position N] [--layer L --head H] [--json]``: look
inside a model on one text.

Prints (or writes as one JSON object, for scripts and notebooks) the forward pass step by step
(names, formulas, shapes, values; in JSON also "stages", each step's picture of the picked token
as the app's Walk tab draws it, from the same hook points in the same order), the logit lens, every head's previous-token and induction
scores, the embedding read-outs (neighbours, token/position angles, and with ``--compare`` the
same token followed through the layers in a second text) and, with ``--ablate``, what switching
off a head, an expert or a sublayer changes. RUN is a run folder, or a preset name / graph .json
(freshly initialised weights). Exits 2 on a user error, with one line saying what to do."""
from __future__ import annotations

import json
import string
import sys
from pathlib import Path

import numpy as np

from . import values
from .checks import check_finite_outputs, say_what_is_used
from .errors import user_message

PROG = "tfstudio explain"
SCORE_LENGTH = 12   # tokens per half of the repeated sequence the head scores read
PREVIEW = 6         # numbers shown per tensor in the text summary


def configure(parser) -> None:
    parser.add_argument("run", metavar="RUN", type=values.path, help="a run folder written by `tfstudio train` "
                                                   "(or a preset name / graph .json: fresh "
                                                   "weights)")
    parser.add_argument("--text", type=values.some_text, default=None,
                        help="the text to explain (default: the run's probe text, or an "
                             "example of its task)")
    parser.add_argument("--position", type=values.any_int, default=-1, metavar="N",
                        help="the token whose next-token prediction is followed (default: the "
                             "last; negative counts from the end)")
    parser.add_argument("--layer", type=values.non_negative_int, default=None, metavar="L",
                        help="open up the attention of this layer only (default: every layer)")
    parser.add_argument("--head", type=values.non_negative_int, default=0, metavar="H",
                        help="the attention head opened up (default 0)")
    parser.add_argument("--temperature", type=values.temperature, default=1.0,
                        help="divide the logits by this for the last step's probabilities "
                             "(0: greedy)")
    parser.add_argument("--top-k", type=values.non_negative_int, default=0,
                        help="keep only the k likeliest tokens in the last step (0: all)")
    parser.add_argument("--top-p", type=values.top_p, default=1.0,
                        help="keep the likeliest tokens whose probabilities add up to p in the "
                             "last step (1: all)")
    parser.add_argument("--ablate", action="append", default=[], metavar="TARGET",
                        help="switch off BLOCK, BLOCK:head=H or BLOCK:expert=E (e.g. "
                             "layers.0.attn:head=1) and report the change; repeatable")
    parser.add_argument("--score-span", default=None, metavar="A:B",
                        help="with --ablate, also score the tokens at positions A..B-1 alone "
                             "(default: a task's answer tokens, after its separator)")
    parser.add_argument("--compare", type=values.some_text, default=None, metavar="TEXT",
                        help="a second text holding the same token: follow it through the "
                             "layers in both and print the cosine per layer (default: none)")
    parser.add_argument("--replay", action="store_true",
                        help="add the embedding map of every kept checkpoint of the run")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (for scripts and notebooks) instead of text")
    parser.add_argument("--no-values", action="store_true",
                        help="leave the tensors' values out of the JSON walk (names, formulas "
                             "and shapes only)")
    parser.add_argument("--tokenizer", default="byte",
                        help="tokenizer for a preset or graph file (a run uses its own)")
    parser.add_argument("--seed", type=values.seed, default=0,
                        help="seed of the fresh weights of a preset or graph file")


class UserError(Exception):
    """A problem with what was asked for: printed as one line, exit 2."""


def run(args) -> int:
    try:
        subject = load_subject(args)
        report = explain(subject, args)
    except UserError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(plain(report), allow_nan=False))
    else:
        print(as_text(report))
    return 0


# ---------------------------------------------------------------------------- the model
class Subject:
    """The model to explain, its tokenizer and where they came from."""

    def __init__(self, model, tokenizer, origin: str, run_dir: Path | None, config=None):
        self.model, self.tokenizer, self.origin = model, tokenizer, origin
        self.run_dir, self.config = run_dir, config


def load_subject(args) -> Subject:
    from ..compiler import CompileError
    from ..data import DataError
    from ..graph import GraphFileError
    from ..runs import CheckpointError, RunError, RunFolder
    from ..runs.preflight import MemoryRefusal
    from ..train.preload import READING, import_frozen

    path = Path(args.run)
    try:
        if path.is_dir():
            folder = RunFolder(path)
            if not folder.exists():
                raise UserError(f"{path} is not a run folder (no graph.json/config.json); "
                                "pass a folder written by `tfstudio train`, or a preset name")
            import_frozen(READING)  # torch comes in here
            model = folder.load_model("cpu")
            say_what_is_used(PROG, folder)
            check_finite_outputs(model, path)
            return Subject(model, folder.tokenizer(), f"run {path}", path, folder.config())
        return _fresh(args)
    except (RunError, CheckpointError, GraphFileError, CompileError, DataError, MemoryRefusal,
            OSError) as exc:
        raise UserError(user_message(exc)) from None


def _fresh(args) -> Subject:
    from ..train.preload import READING, import_frozen
    import_frozen(READING)  # torch comes in here
    import torch

    from ..compiler import compile_graph
    from ..data import build_tokenizer
    from ..presets import load_preset_or_file
    from ..runs.preflight import check_model_memory
    from ..train.pipeline import fit_graph_to_tokenizer

    graph = load_preset_or_file(args.run)
    tokenizer = build_tokenizer(args.tokenizer)
    fitted = fit_graph_to_tokenizer(graph, tokenizer)
    # refused before torch is asked for the weights (a d_model of 10^6 asked it for 12 TB)
    check_model_memory(fitted, copies=1, what=f"explaining {args.run}")
    torch.manual_seed(args.seed)
    model = compile_graph(fitted).eval()
    return Subject(model, tokenizer, f"{args.run} (fresh weights, seed {args.seed})", None)


def _task(subject: Subject):
    from ..data import DataError, parse_task

    corpus = getattr(subject.config, "corpus", "") or ""
    if not corpus.startswith("task:"):
        return None
    try:
        return parse_task(corpus[len("task:"):])
    except DataError:
        return None


def default_text(subject: Subject) -> str:
    import random

    from ..probes.inputs import FALLBACK_TEXT

    if subject.config is not None and subject.config.probe_text:
        return subject.config.probe_text
    task = _task(subject)
    if task is not None:
        return task.example(random.Random(2024)).text.rstrip("\n")
    return FALLBACK_TEXT


def score_pool(subject: Subject) -> list[int]:
    """Tokens for the head scores' random sequence: the task's letters, else a-z."""
    task = _task(subject)
    letters = getattr(task, "letters", None) or string.ascii_lowercase
    pool = []
    for ch in letters:
        ids = subject.tokenizer.encode(ch)
        if len(ids) == 1:
            pool.append(ids[0])
    return list(dict.fromkeys(pool))


def _score_span(text: str | None, inputs, task, separator: str):
    """(span, label) to score an ablation on: --score-span A:B, else a task's answer (the
    tokens after its last separator), else (None, "")."""
    if text:
        start, colon, end = text.partition(":")
        if not colon or not start.strip().isdigit() or not end.strip().isdigit():
            raise UserError(f"--score-span takes token positions A:B such as 5:12; got {text!r}")
        return (int(start), int(end)), "your --score-span tokens"
    tokens = inputs.tokens[inputs.stream_role] if isinstance(inputs.tokens, dict) else \
        inputs.tokens
    from ..probes.ablation import answer_span

    span = answer_span(tokens, separator) if task is not None else None
    return (span, "the answer tokens") if span is not None else (None, "")


# ---------------------------------------------------------------------------- the report
def explain(subject: Subject, args) -> dict:
    from .. import probes

    model, tokenizer = subject.model, subject.tokenizer
    text = args.text if args.text is not None else default_text(subject)
    task = _task(subject)
    separator = getattr(task, "sep", ">") or ">"
    try:
        inputs = probes.probe_inputs(model, tokenizer, text, separator=separator)
        walk = probes.forward_walk(model, inputs, position=args.position, head=args.head,
                                   layer=args.layer, temperature=args.temperature,
                                   top_k=args.top_k, top_p=args.top_p)
        lens = probes.logit_lens(model, inputs, tokenizer)
        pool = score_pool(subject)
        scores = probes.head_scores(model, pool, length=min(SCORE_LENGTH, len(pool)))
        embeddings = _embeddings(subject, inputs, walk.position, args)
        span, label = _score_span(args.score_span, inputs, task, separator)
        ablation = (probes.ablation_effect(model, inputs, args.ablate, tokenizer,
                                           walk.position, span=span, span_label=label).to_dict()
                    if args.ablate else None)
    except ValueError as exc:
        raise UserError(user_message(exc)) from None
    if args.layer is not None and not any(s.name.endswith(": scores") for s in walk.steps):
        raise UserError(f"layer {args.layer} has no attention to open up; choose a layer "
                        "between 0 and the number of layers - 1, or leave --layer out")
    return {
        "model": model.graph.meta.get("name", "") if model.graph is not None else "",
        "origin": subject.origin, "family": model.family, "text": text,
        "position": walk.position, "head": args.head, "layer": args.layer,
        "sampling": {"temperature": args.temperature, "top_k": args.top_k,
                     "top_p": args.top_p},
        "tokens": inputs.tokens, "ids": inputs.ids, "stream_role": inputs.stream_role,
        "walk": walk.to_dict(values=not args.no_values)["steps"],
        # what the app's Walk tab draws, stage by stage: the picked token's row, a number per
        # position, the likeliest tokens (Step.summary)
        "stages": (_named_tops(walk.summaries(), tokenizer) if not args.no_values else
                   [{k: stage[k] for k in NO_VALUE_KEYS} for stage in walk.summaries()]),
        "logit_lens": lens.to_dict(),
        "head_scores": {"sequence": f"{min(SCORE_LENGTH, len(pool))} random tokens, repeated",
                        "blocks": scores},
        "embeddings": embeddings,
        "ablation": ablation,
    }


# what a stage says without its tensors' values (--no-values)
NO_VALUE_KEYS = ("name", "formula", "shape", "block", "kind")


def _named_tops(stages: list[dict], tokenizer) -> list[dict]:
    for stage in stages:
        if "top_ids" in stage:
            stage["top_tokens"] = tokenizer.token_strings([int(i) for i in stage["top_ids"]])
    return stages


def _embeddings(subject: Subject, inputs, position: int, args) -> dict:
    from .. import probes

    model, tokenizer = subject.model, subject.tokenizer
    ids = list(dict.fromkeys(inputs.ids[inputs.stream_role] + score_pool(subject)))
    token = inputs.ids[inputs.stream_role][position]
    out: dict = {"map": probes.embedding_map(model, ids, tokenizer),
                 "position_angles": probes.position_angles(model, ids), "contextual": None,
                 "replay": None}
    row = out["map"]["ids"].tolist().index(token)
    out["token"] = {"id": int(token), "text": out["map"]["labels"][row],
                    "neighbours": tokenizer.token_strings(out["map"]["neighbours"][row].tolist()),
                    "cosines": out["map"]["neighbour_cosines"][row]}
    if args.compare is not None:
        other = probes.probe_inputs(model, tokenizer, args.compare)
        other_ids = other.ids[other.stream_role]
        if token not in other_ids:
            raise UserError(f"the token {out['token']['text']!r} at position {position} does "
                            "not occur in the --compare text; give a text that contains it")
        where = other_ids.index(token)
        out["contextual"] = {"position_in_compare": where, **probes.token_through_layers(
            model, inputs, position, other, where)}
    if args.replay and subject.run_dir is not None:
        out["replay"] = probes.embedding_replay(model, subject.run_dir, ids, tokenizer)
    return out


def plain(value):
    """Numpy arrays and scalars to JSON values (non-finite numbers to null)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, (np.floating, float)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


# ---------------------------------------------------------------------------- text
def as_text(report: dict) -> str:
    pos = report["position"]
    tokens = report["tokens"][report["stream_role"]]
    lines = [f"{report['model'] or 'model'} ({report['origin']}), a {report['family']}",
             f"text {report['text']!r}: {len(tokens)} tokens; position {pos} is "
             f"{tokens[pos]!r}", "", f"Forward pass (head {report['head']}; each row shows "
             f"position {pos}'s values):"]
    for step in report["walk"]:
        preview = _preview(step, pos) if "values" in step else ""
        shape = "x".join(map(str, step["shape"])) or "scalar"
        lines.append(f"  {step['name']:<48} [{shape}]  {step['formula']}")
        if preview:
            lines.append(f"      {preview}")
    lines += ["", "Next token:"] + _next_tokens(report)
    lines += ["", "Logit lens (top token and its probability, per layer and position):"]
    lines += _lens_table(report["logit_lens"])
    lines += ["", f"Head scores on {report['head_scores']['sequence']} "
              "(previous-token / induction):"]
    for block, s in report["head_scores"]["blocks"].items():
        cells = [f"h{h} {p:.2f}/{i:.2f}" for h, (p, i) in
                 enumerate(zip(s["previous_token"], s["induction"]))]
        lines.append(f"  {block:<20} " + "  ".join(cells))
    if not report["head_scores"]["blocks"]:
        lines.append("  (no self-attention on the stream)")
    lines += ["", "Embeddings:"] + _embedding_lines(report["embeddings"])
    if report["ablation"]:
        a = report["ablation"]
        lines += ["", f"Ablation of {', '.join(a['targets'])}:",
                  f"  loss on the text {a['loss_before']:.4f} -> {a['loss_after']:.4f} "
                  f"({a['loss_change']:+.4f} nats); KL at position {a['position']} "
                  f"{a['kl']:.4f} nats",
                  *([f"  loss on {a['span']['label']} (positions {a['span']['start']}-"
                     f"{a['span']['end'] - 1}) {a['span']['loss_before']:.4f} -> "
                     f"{a['span']['loss_after']:.4f} ({a['span']['loss_change']:+.4f} nats)"]
                    if "span" in a else []),
                  "  top before: " + _tops(a["top_before"]),
                  "  top after:  " + _tops(a["top_after"])]
    return "\n".join(lines)


def _preview(step: dict, pos: int) -> str:
    values = np.asarray(step["values"], dtype=object)
    if values.ndim >= 1 and values.shape[0] > pos and step["kind"] != "sampling" and \
            values.ndim >= 2:
        values = values[pos]
    flat = values.reshape(-1)[:PREVIEW]
    shown = ", ".join("-inf" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))
                      for v in flat)
    return f"[{shown}{', ...' if values.size > PREVIEW else ''}]"


def _next_tokens(report: dict) -> list[str]:
    steps = [s for s in report["walk"] if s["kind"] == "sampling" and "values" in s]
    if not steps:
        return ["  (values left out)"]
    first, last = np.asarray(steps[0]["values"]), np.asarray(steps[-1]["values"])
    top = np.argsort(-first, kind="stable")[:5]
    lens = report["logit_lens"]
    names = {int(i): t for i, t in zip(np.asarray(lens["top_ids"][-1][report["position"]]),
                                       lens["top_tokens"][-1][report["position"]])}
    return [f"  {names.get(int(i), str(int(i)))!r:>8}  p {first[i]:.4f}  after filters "
            f"{last[i]:.4f}" for i in top]


def _lens_table(lens: dict, width: int = 12) -> list[str]:
    tokens = lens["tokens"][-width:]
    start = len(lens["tokens"]) - len(tokens)
    label = max(len(s) for s in lens["layers"]) + 2
    lines = [" " * label + "".join(f"{_short(t):>12}" for t in tokens)]
    for row, name in enumerate(lens["layers"]):
        cells = [f"{_short(lens['top_tokens'][row][p][0])} {lens['top_probs'][row][p][0]:.2f}"
                 for p in range(start, len(lens["tokens"]))]
        lines.append(name.ljust(label) + "".join(f"{c:>12}" for c in cells))
    return lines


def _short(token: str, width: int = 7) -> str:
    """A token's repr, cut to fit a table cell."""
    text = repr(token)
    return text if len(text) <= width else text[:width - 1] + "…"


def _embedding_lines(e: dict) -> list[str]:
    from ..probes.embeddings import alignment_words
    t = e["token"]
    lines = [f"  {t['text']!r} nearest by cosine: " + ", ".join(
        f"{n!r} {c:.2f}" for n, c in zip(t["neighbours"], t["cosines"])),
        f"  PCA of {len(e['map']['ids'])} token embeddings explains "
        f"{100 * float(np.sum(e['map']['explained'])):.1f}% of their variance in 2D"]
    angles = e["position_angles"]
    lines.append(f"  token vs {angles['scheme']} position vectors: "
                 f"{alignment_words(angles)}" if angles else
                 "  no position vectors are added (RoPE, ALiBi or none)")
    c = e["contextual"]
    if c:
        lines.append(f"  the same token in the --compare text (position "
                     f"{c['position_in_compare']}), cosine per layer:")
        lines += [f"    {name:<20} {value:.4f}" for name, value in zip(c["layers"],
                                                                        c["cosine"])]
    if e["replay"]:
        lines.append(f"  replay: {len(e['replay'])} checkpoints (steps "
                     f"{', '.join(str(r['step']) for r in e['replay'])})")
    return lines


def _tops(tops) -> str:
    return ", ".join(f"{tok!r} {p:.3f}" for tok, p in tops)
