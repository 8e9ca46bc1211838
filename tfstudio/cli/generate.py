"""``tfstudio generate RUN_DIR --prompt ...``: sample from a trained run, streaming tokens.

Every argument is checked before anything is printed. The model reads at most the length it
was trained at (the run's ``seq_len``): a longer prompt is cut to its end, and past that length
the window slides, so any ``--max-new-tokens`` works. Runs trained on a task stop at the
newline that ends an answer."""
from __future__ import annotations

import sys
from pathlib import Path

from . import values
from .checks import check_device, check_finite_outputs, say_what_is_used
from .errors import UsageError, user_message

ESCAPES = {"\\n": "\n", "\\t": "\t"}


def configure(parser) -> None:
    parser.add_argument("run_dir", type=values.path, help="a run folder written by `tfstudio train` or "
                                        "`tfstudio import-hf`")
    parser.add_argument("--prompt", default="",
                        help="text to continue (decoder) or the source text (encoder-decoder); "
                             "default: empty (a decoder starts from the end-of-text token)")
    parser.add_argument("--temperature", type=values.temperature, default=0.8,
                        help="divide the logits by this before sampling; 0 always takes the "
                             "likeliest token (greedy)")
    parser.add_argument("--top-k", type=values.non_negative_int, default=0,
                        help="sample only among the k likeliest tokens; 0 keeps all")
    parser.add_argument("--top-p", type=values.top_p, default=1.0,
                        help="sample only among the likeliest tokens whose probabilities add up "
                             "to p (nucleus sampling), between 0 (exclusive) and 1; 1 keeps all")
    parser.add_argument("--max-new-tokens", type=values.positive_int, default=200,
                        help="stop after this many new tokens (any number: past the trained "
                             "length the model reads a sliding window)")
    parser.add_argument("--stop", action="append", metavar="TEXT",
                        help="stop when the output contains TEXT (not printed); repeatable; "
                             "\\n and \\t stand for a newline and a tab; default: the newline "
                             "that ends an answer for task runs, else none (--stop '' for none)")
    parser.add_argument("--seed", type=values.seed, default=None,
                        help="random seed, for repeatable samples (default: a fresh one each run)")
    parser.add_argument("--device", type=values.device, default="cpu",
                        help="where to run the model: cpu, cuda, cuda:N, mps or auto (the best "
                             "available)")
    parser.add_argument("--no-memory-check", action="store_true",
                        help="load the weights even when the memory pre-flight predicts they "
                             "will not fit (the refusal names both numbers)")


def run(args) -> int:
    from ..train.preload import READING, import_frozen
    import_frozen(READING)  # torch comes in here
    from ..train.generation import fit_to_window, stream_text

    device = check_device(args.device)
    folder = _run_folder(args.run_dir)
    model, tokenizer, config = _load(folder, device, memory_check=not args.no_memory_check)
    say_what_is_used("tfstudio generate", folder, args.device, device)
    check_finite_outputs(model, args.run_dir)
    if model.family == "encoder":
        from ..train.generation import encoder_only_message
        raise UsageError(f"{encoder_only_message()}; "
                         f"e.g. `tfstudio train tiny-gpt --out runs/gpt`")
    window = folder.trained_length()
    text_ids = tokenizer.encode(args.prompt)
    if len(text_ids) > window:
        print(f"tfstudio generate: note: the prompt is {len(text_ids):,} tokens and this run was "
              f"trained on {window}; the model reads only its last {window}", file=sys.stderr)
        text_ids = fit_to_window(text_ids, window)
    if len(text_ids) + args.max_new_tokens > window:
        print(f"tfstudio generate: note: this run was trained on {window}-token windows; once "
              f"the text passes {window} tokens the model reads only its last {window} or fewer (a "
              f"sliding window: it has never seen later positions)", file=sys.stderr)
    if model.family == "encoder-decoder":
        source, prompt = text_ids, [tokenizer.bos_id]
    else:
        source, prompt = None, text_ids or [tokenizer.eot_id]
        sys.stdout.write(args.prompt)  # all of it: the text continues from its end
    stops = _stops(args.stop, config.corpus)
    for piece in stream_text(model, tokenizer, prompt, stops=stops, source_ids=source,
                             window=window, max_new_tokens=args.max_new_tokens,
                             temperature=args.temperature, top_k=args.top_k,
                             top_p=args.top_p, seed=args.seed):
        sys.stdout.write(piece)
        sys.stdout.flush()
    sys.stdout.write("\n")
    return 0


def _run_folder(path: str):
    from ..runs.folder import RunFolder
    folder = RunFolder(path)
    root = Path(path)
    if not root.is_dir():
        raise UsageError(f"no run folder '{path}'; give a folder written by `tfstudio train`")
    weights = any(root.glob("*.safetensors")) or (root / "pytorch_model.bin").exists()
    if not folder.exists() and (root / "config.json").exists() and weights:
        raise UsageError(f"{path} is a Hugging Face model folder, not a tfstudio run; turn it "
                         f"into one first: `tfstudio import-hf {path} --out RUN_DIR`, then "
                         f"`tfstudio generate RUN_DIR`")
    return folder


def _load(folder, device, memory_check: bool):
    from ..runs.checkpoint import CheckpointError
    from ..runs.folder import RunError
    try:
        return (folder.load_model(str(device), memory_check=memory_check), folder.tokenizer(),
                folder.config())
    except (RunError, CheckpointError, OSError, ValueError) as exc:
        raise UsageError(user_message(exc)) from None


def _stops(given: list[str] | None, corpus: str) -> list[str]:
    """The stop sequences: those given (escapes expanded), else a task run's answer newline."""
    if given is None:
        return ["\n"] if corpus.startswith("task:") else []
    stops = []
    for text in given:
        for escape, char in ESCAPES.items():
            text = text.replace(escape, char)
        if text:
            stops.append(text)
    return stops
