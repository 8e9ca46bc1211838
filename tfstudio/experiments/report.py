"""A comparison as a page: ``report.md`` and ``report.html`` in the comparison folder, with the
table of every variant, the n-gram baselines, loss per position bucket and the plots (drawn by
the caller; see ``tfstudio.gui.report_plots``). ``plot_data`` hands the plots plain numbers."""
from __future__ import annotations

import html as html_lib
from pathlib import Path

from ..runs.disk import write_whole
from .results import COST_DTYPE, Comparison, VariantResult, collect, seed_mean
from .sweep import saved_table

COLUMNS = ("variant", "seeds", "parameters", "FLOPs/token", f"KV bytes/token ({COST_DTYPE})",
           "KV at context (measured / model)", "generation tok/s (timed to context)",
           "training tok/s", "final val loss", "steps to target")


def _number(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _si(value: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.2f}{unit}"
    return f"{value:.0f}"


def _kib(value: int) -> str:
    return f"{value / 1024:.1f} KiB"


ACCURACY = "answer accuracy"


def columns(c: Comparison) -> list[str]:
    """The table's columns; answer accuracy when the runs trained on a synthetic task."""
    extra = [ACCURACY] if any(v.accuracies for v in c.variants) else []
    return list(COLUMNS) + extra


def rows(c: Comparison) -> list[list[str]]:
    scored = any(v.accuracies for v in c.variants)
    return [table_row(v, c.target_loss) + ([_accuracy(v)] if scored else [])
            for v in c.variants]


def _accuracy(v: VariantResult) -> str:
    values = v.accuracies
    if not values:
        return "n/a"
    mean = sum(values) / len(values)
    if len(values) == 1:
        return f"{mean:.1%}"
    spread = (sum((x - mean) ** 2 for x in values) / (len(values) - 1)) ** 0.5
    return f"{mean:.1%} ± {spread:.1%}"


def table_row(variant: VariantResult, target: float | None) -> list[str]:
    loss = _number(variant.val_loss)
    if variant.val_spread is not None:
        loss += f" ± {variant.val_spread:.3f}"
    costs = [r.inference for r in variant.runs if r.inference is not None]
    kv = (f"{_kib(costs[0].kv_bytes_measured)} / {_kib(costs[0].kv_bytes_predicted)} "
          f"({costs[0].dtype})" if costs else "n/a")
    # generation is timed from a 1-token prompt up to the context, so the speed names it
    speed = (f"{sum(c.tokens_per_s for c in costs) / len(costs):,.0f} (to "
             f"{costs[0].context_length} tokens)" if costs else "n/a")
    steps = [r.steps_to(target) for r in variant.runs] if target is not None else []
    reached = [s for s in steps if s is not None]
    to_target = ("n/a" if target is None else "not reached" if not reached else
                 f"{sum(reached) / len(reached):,.0f}" +
                 (f" ({len(reached)}/{len(steps)} seeds)" if len(reached) < len(steps) else ""))
    return [variant.name, str(len(variant.runs)), f"{variant.params:,}",
            _si(variant.flops_per_token), f"{variant.kv_bytes_per_token:,}", kv, speed,
            f"{variant.tokens_per_s:,.0f}", loss, to_target]


def length_table(c: Comparison) -> tuple[list[str], list[list[str]]] | None:
    evals = [(v.name, v.mean_lengths()) for v in c.variants]
    evals = [(name, e) for name, e in evals if e is not None]
    if not evals:
        return None
    first = evals[0][1]
    warm = [f"warm-up {first.warmup_name()} (apart)"] if first.warmup else []
    header = ["variant"] + warm + [f"loss at {b}" for b in first.bucket_names()]
    rows = []
    for name, e in evals:
        cells = [_number(x) if x is not None else f"cannot go past {e.limit}" for x in e.buckets]
        rows.append([name] + ([_number(e.warmup_loss)] if warm else []) + cells)
    return header, rows


def warmup_note(c: Comparison) -> str:
    """What the loss-by-position table leaves out of its first bucket, and why."""
    e = next((v.mean_lengths() for v in c.variants if v.mean_lengths() is not None), None)
    if e is None or not e.warmup:
        return ""
    return (f"Positions {e.warmup_name()} (a quarter of the training length, at most half the "
            f"first bucket), where a token has "
            f"under {e.warmup} tokens of context, are averaged apart as the warm-up; the first "
            f"bucket starts at {e.warmup}.")


def _settings(c: Comparison) -> str:
    cfg = c.plan.config
    varied = "; ".join(f"{k} = {', '.join(v)}" for k, v in c.plan.varies)
    return (f"Base **{c.plan.base}**, varying {varied}. Every run: corpus `{cfg.corpus}`, "
            f"tokenizer `{cfg.tokenizer}`, {cfg.steps} steps of {cfg.batch_size} x {cfg.seq_len} "
            f"tokens, {c.lr_text()}, seeds {', '.join(map(str, c.plan.seeds))}. "
            f"{c.token_budget()}").strip()


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _notes(c: Comparison) -> list[str]:
    notes = []
    if c.target_loss is not None:
        notes.append(f"Steps to target: the first evaluation at or below a validation loss of "
                     f"{c.target_loss:.3f}.")
    notes.append(f"KV bytes/token: the cost model's prediction in {COST_DTYPE}; at context: the "
                 "cache's key and value tensors after one context length of tokens, measured "
                 "and predicted. Generation: batch 1 with the KV cache, timed generating from a "
                 "1-token prompt up to the context named in the cell (a longer context reads "
                 "a longer cache per token, so the speed holds for that length only).")
    if warmup_note(c):
        notes.append(warmup_note(c))
    if any(v.accuracies for v in c.variants):
        notes.append(f"{ACCURACY.capitalize()}: share of the task's answer tokens predicted "
                     "right (argmax) at the last evaluation; on a task, the loss too is "
                     "counted on the answer tokens only.")
    from .lessons.measures import still_learning_sentence
    # a lesson says it among its sentences
    learning = still_learning_sentence(c) if not c.plan.lesson else ""
    if learning:
        notes.append(learning)
    if c.missing:
        notes.append(f"{len(c.missing)} run(s) not finished yet and left out: " +
                     ", ".join(f"{s.variant} seed {s.seed}" for s in c.missing[:6]))
    return notes


def lesson_tables(c: Comparison) -> list[tuple[str, list[str], list[list[str]]]]:
    """A built-in lesson's own tables (``Lesson.tables``): (title, header, rows) each."""
    from .lessons import LESSONS
    lesson = LESSONS.get(c.plan.lesson)
    return list(lesson.tables(c)) if lesson is not None and lesson.tables else []


def markdown(c: Comparison, pictures: dict[str, str], title: str = "Comparison",
             summary: list[str] = ()) -> str:
    parts = [f"# {title}", "", *summary, "" if summary else "", _settings(c), "",
             _md_table(columns(c), rows(c)), ""]
    for caption, header, body in lesson_tables(c):
        parts += [f"## {caption}", "", _md_table(header, body), ""]
    parts += [f"- {n}" for n in _notes(c)] + [""]
    swept = saved_table(c.out)
    if swept:
        parts += ["## Learning-rate sweep (selection loss per lr, mean ± spread over seeds; "
                  "each variant trained at its chosen lr)", "", *swept, ""]
    if c.baselines:
        parts += ["## Counting baselines (validation cross-entropy, nats/token)", "",
                  _md_table(list(c.baselines), [[f"{x:.3f}" for x in c.baselines.values()]]), ""]
    table = length_table(c)
    if table:
        parts += ["## Loss by position (trained on "
                  f"{c.plan.config.seq_len} tokens)", "", _md_table(*table), ""]
    for caption, path in pictures.items():
        parts += [f"![{caption}]({path})", ""]
    return "\n".join(parts)


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    esc = html_lib.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_STYLE = ("body{font-family:system-ui,sans-serif;max-width:72em;margin:2em auto;padding:0 1em;"
          "color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
          "padding:.3em .6em;text-align:right}td:first-child,th:first-child{text-align:left}"
          "th{background:#f3f3f3}img{max-width:100%;border:1px solid #ddd;margin:.5em 0}"
          ".summary{font-size:1.15em;background:#f6f8ff;padding:.6em 1em;border-left:4px solid "
          "#4a6cf7}")


def html(c: Comparison, pictures: dict[str, str], title: str = "Comparison",
         summary: list[str] = ()) -> str:
    esc = html_lib.escape
    settings = esc(_settings(c)).replace("**", "")
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>"
             f"<style>{_STYLE}</style></head><body><h1>{esc(title)}</h1>"]
    if summary:
        parts.append("<div class='summary'>" + "".join(f"<p>{esc(s)}</p>" for s in summary)
                     + "</div>")
    for caption, path in pictures.items():
        parts.append(f"<figure><img src='{esc(path)}' alt='{esc(caption)}'>"
                     f"<figcaption>{esc(caption)}</figcaption></figure>")
    parts.append(f"<p>{settings}</p>")
    parts.append(_html_table(columns(c), rows(c)))
    for caption, header, body in lesson_tables(c):
        parts.append(f"<h2>{esc(caption)}</h2>{_html_table(header, body)}")
    parts.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in _notes(c)) + "</ul>")
    if c.baselines:
        parts.append("<h2>Counting baselines (validation cross-entropy, nats/token)</h2>")
        parts.append(_html_table(list(c.baselines),
                                 [[f"{x:.3f}" for x in c.baselines.values()]]))
    table = length_table(c)
    if table:
        parts.append(f"<h2>Loss by position (trained on {c.plan.config.seq_len} tokens)</h2>")
        parts.append(_html_table(*table))
    parts.append("</body></html>")
    return "\n".join(parts)


def write(c: Comparison, pictures: dict[str, str], title: str = "Comparison",
          summary: list[str] = ()) -> tuple[Path, Path]:
    """Write report.md and report.html into the comparison folder; returns their paths."""
    md, page = c.out / "report.md", c.out / "report.html"
    write_whole(md, markdown(c, pictures, title, summary))
    write_whole(page, html(c, pictures, title, summary))
    return md, page


def plot_data(c: Comparison) -> dict:
    """Plain numbers for the plots: curves per variant (seeds averaged step by step), the
    baselines, validation loss against parameters, loss against position."""
    curves, points, positions, norms = {}, [], {}, {}
    for v in c.variants:
        curves[v.name] = {"train": seed_mean([r.train_curve for r in v.runs]),
                          "val": seed_mean([r.val_curve for r in v.runs])}
        if v.val_loss is not None:
            costs = [r.inference for r in v.runs if r.inference is not None]
            points.append({"name": v.name, "params": v.params, "loss": v.val_loss,
                           "spread": v.val_spread or 0.0,
                           "kv_bytes": costs[0].kv_bytes_measured if costs else None,
                           "kv_dtype": costs[0].dtype if costs else None})
        mean = v.mean_lengths()
        if mean is not None:
            positions[v.name] = mean.per_position
        norms[v.name] = {layer: series for layer, series in v.runs[0].layer_grad_norms.items()}
    return {"curves": curves, "baselines": dict(c.baselines), "params": points,
            "positions": positions, "train_length": c.plan.config.seq_len,
            "bucket_ends": list(c.plan.eval_lengths), "grad_norms": norms}


def write_page(out: Path, draw, *, target_loss: float | None = None,
               progress=lambda line: None) -> tuple[Path, list[str]]:
    """Collect the finished runs in ``out``, draw the pictures with
    ``draw(out, plot_data, norms=...) -> {caption: path}`` (the GUI layer's
    ``report_plots.draw_report``; nothing here imports Qt) and write report.md/html; a built-in
    lesson's folder gets its title and two sentences. Returns (the HTML page, the sentences)."""
    from .lessons import LESSONS
    comparison = collect(out, target_loss=target_loss, progress=progress)
    if not comparison.variants:
        raise ValueError(f"no run in {out} has finished yet; train them (tfstudio compare ... "
                         f"--out {out}, or the commands of --print-commands) first")
    lesson = LESSONS.get(comparison.plan.lesson)
    if lesson and lesson.measure:
        lesson.measure(comparison, progress)
    pictures = draw(out, plot_data(comparison), norms=bool(lesson and lesson.grad_norms))
    title = lesson.title if lesson else "Comparison"
    summary = lesson.summarise(comparison) if lesson else []
    _, page = write(comparison, pictures, title, summary)
    return page, summary
