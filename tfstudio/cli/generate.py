"""``tfstudio generate RUN_DIR --prompt ...``: sample from a trained run, streaming tokens."""
from __future__ import annotations

import sys


def configure(parser) -> None:
    parser.add_argument("run_dir", help="a run folder written by `tfstudio train`")
    parser.add_argument("--prompt", default="", help="text to continue (decoder) or the source "
                                                     "text (encoder-decoder)")
    parser.add_argument("--temperature", type=float, default=0.8, help="0 is greedy")
    parser.add_argument("--top-k", type=int, default=0, help="keep the k likeliest (0: all)")
    parser.add_argument("--top-p", type=float, default=1.0, help="nucleus mass to keep (1: all)")
    parser.add_argument("--max-new-tokens", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--device", default="cpu")


def run(args) -> int:
    from ..train.generation import generate_ids
    from ..runs.checkpoint import CheckpointError
    from ..runs.folder import RunError, RunFolder

    folder = RunFolder(args.run_dir)
    try:
        model = folder.load_model(args.device)
        tokenizer = folder.tokenizer()
    except (RunError, CheckpointError, OSError, ValueError) as exc:
        print(f"tfstudio generate: {exc}", file=sys.stderr)
        return 2
    for note in folder.notes:  # a damaged newer checkpoint passed over
        print(f"tfstudio generate: {note}", file=sys.stderr)
    if model.family == "encoder-decoder":
        source, prompt = tokenizer.encode(args.prompt), [tokenizer.bos_id]
    else:
        source, prompt = None, tokenizer.encode(args.prompt) or [tokenizer.eot_id]
    sys.stdout.write(args.prompt if model.family != "encoder-decoder" else "")
    try:
        pending: list[int] = []
        for token in generate_ids(model, prompt, max_new_tokens=args.max_new_tokens,
                                  temperature=args.temperature, top_k=args.top_k,
                                  top_p=args.top_p, seed=args.seed,
                                  stop_ids=[tokenizer.eot_id], source_ids=source):
            if token == tokenizer.eot_id:
                break
            pending.append(token)
            text = tokenizer.decode(pending)
            if not text.endswith("\ufffd"):  # wait for the rest of a multi-byte character
                sys.stdout.write(text)
                sys.stdout.flush()
                pending.clear()
    except ValueError as exc:
        print(f"\ntfstudio generate: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write("\n")
    return 0
