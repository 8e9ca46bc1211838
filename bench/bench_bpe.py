"""Benchmark: BPE training (rustbpe) and encoding (tiktoken) on 1 MB of text, against references
measured in the same run.

Training: rustbpe on 1 MB for vocabularies of 1,024 and 4,096, and, on a 64 KB slice, rustbpe
against a plain Python BPE trainer (same regex pre-tokenization, recount pairs per merge,
rustbpe's tie-break) whose merges are compared one by one. Encoding: tfstudio's BPE
(tiktoken running rustbpe's merge table) against rustbpe's own encoder, the byte tokenizer
(UTF-8 bytes, the ceiling) and, on a 64 KB slice, a plain Python BPE encoder that must produce
the same ids. Every time is the best of ``--reps`` runs. Results go to the BPE section of
docs/BENCHMARKS.md.

    python bench/bench_bpe.py [--reps 3] [--no-write]
"""
from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from collections import Counter

import regex
import rustbpe

from report import DOC, replace_section  # noqa: E402  (bench/ is on sys.path)
SECTION = "## BPE: training (rustbpe) and encoding (tiktoken)"
MB = 1_000_000
SLICE = 64_000


def best_time(fn, reps):
    best, result = float("inf"), None
    for _ in range(reps):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


class TextCorpus:
    """The minimum of ``Corpus`` that training needs, over an in-memory string."""

    def __init__(self, text):
        import hashlib
        self.text, self.spec = text, "bench"
        self.fingerprint = hashlib.sha256(text.encode()).hexdigest()

    def documents(self):
        return iter([iter([self.text])])


def python_train(text, n_merges, pattern):
    """Reference trainer: count pre-tokens, then repeatedly merge the most frequent pair of
    token ids (ties: the smallest pair, as rustbpe breaks them), recounting every pair each
    time. Returns the merged tokens' bytes in order."""
    words = Counter(regex.findall(pattern, text))
    seqs = {w: list(w.encode()) for w in words}
    token_bytes = [bytes((b,)) for b in range(256)]
    for _ in range(n_merges):
        pairs = Counter()
        for w, count in words.items():
            s = seqs[w]
            for pair in zip(s, s[1:]):
                pairs[pair] += count
        if not pairs:
            break
        top = max(pairs.values())
        a, b = min(p for p, c in pairs.items() if c == top)
        new = len(token_bytes)
        token_bytes.append(token_bytes[a] + token_bytes[b])
        for w, s in seqs.items():
            i, out = 0, []
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            seqs[w] = out
    return token_bytes[256:]


def python_encode(text, ranks, pattern):
    """Reference encoder: in each pre-token, merge the lowest-ranked adjacent pair until none
    is left (tiktoken's algorithm, written plainly)."""
    ids = []
    for piece in regex.findall(pattern, text):
        parts = [bytes((b,)) for b in piece.encode()]
        while len(parts) > 1:
            best = min(range(len(parts) - 1),
                       key=lambda i: ranks.get(parts[i] + parts[i + 1], float("inf")))
            if parts[best] + parts[best + 1] not in ranks:
                break
            parts[best:best + 2] = [parts[best] + parts[best + 1]]
        ids.extend(ranks[p] for p in parts)
    return ids


def one_mb_of_pydoc():
    from pydoc_data.topics import topics
    prose = "\n\n".join(topics[k] for k in sorted(topics))
    return (prose * (MB // len(prose) + 1))[:MB]


def run(reps):
    from tfstudio.data.bpe import SPLIT_PATTERN, train_bpe
    from tfstudio.data.simple_tokenizers import ByteTokenizer
    from tfstudio.data.storygen import sample_text

    texts = {"pydoc prose": one_mb_of_pydoc(),
             "sample stories": sample_text("medium")[:MB]}
    rows_train, rows_encode, notes = [], [], []
    for label, text in texts.items():
        corpus = TextCorpus(text)
        mb = len(text.encode()) / MB
        for vocab in (1024, 4096):
            t, tok = best_time(lambda: train_bpe(corpus, vocab, use_cache=False), reps)
            rows_train.append(f"| {label} | {mb:.2f} MB | {vocab} | {tok.vocab_size} | "
                              f"{t * 1000:.0f} ms | "
                              f"{mb / t:.1f} MB/s |")
        tok = train_bpe(corpus, 4096, use_cache=False)
        ranks = {tok.token_bytes(i): i for i in range(tok.ordinary_vocab_size)}
        reference = rustbpe.Tokenizer()
        reference.train_from_iterator(iter([text]), 4092, pattern=SPLIT_PATTERN)
        byte_tok = ByteTokenizer()
        t_tik, ids = best_time(lambda: tok.encode(text), reps)
        t_rust, rust_ids = best_time(lambda: reference.encode(text), reps)
        t_byte, _ = best_time(lambda: byte_tok.encode_array(text), reps)
        sl = text[:SLICE]
        t_py, py_ids = best_time(lambda: python_encode(sl, ranks, SPLIT_PATTERN), 1)
        t_tik_sl, tik_sl = best_time(lambda: tok.encode(sl), reps)
        assert py_ids == tik_sl, "the Python reference encoder disagrees with tiktoken"
        assert rust_ids == ids, "rustbpe's encoder disagrees with tiktoken"
        rows_encode.append(
            f"| {label} | {len(text.encode()) / len(ids):.2f} | {mb / t_tik:.1f} | "
            f"{mb / t_rust:.1f} | {mb / t_byte:.0f} | {SLICE / MB / t_py:.3f} | "
            f"{t_py / t_tik_sl:.0f}x |")

    # training against the Python reference, on a slice both can handle
    sl = texts["pydoc prose"][:SLICE]
    n_merges = 200
    t_py, py_merges = best_time(lambda: python_train(sl, n_merges, SPLIT_PATTERN), 1)
    t_rs, tok = best_time(lambda: train_bpe(TextCorpus(sl), 256 + n_merges + 4,
                                            use_cache=False), reps)
    rs_merges = [tok.token_bytes(i) for i in range(256, tok.ordinary_vocab_size)]
    same = sum(a == b for a, b in zip(py_merges, rs_merges))
    notes.append(f"Training on a {SLICE // 1000} KB slice of pydoc prose, {n_merges} merges: "
                 f"rustbpe {t_rs * 1000:.1f} ms, the Python reference {t_py * 1000:.0f} ms "
                 f"(rustbpe **{t_py / t_rs:.0f}x** faster); {same}/{n_merges} merges identical, "
                 f"in order.")
    return rows_train, rows_encode, notes


def write_section(rows_train, rows_encode, notes, reps):
    import tiktoken
    from importlib import metadata
    body = "\n".join([
        "`bench/bench_bpe.py`: best of "
        f"{reps} runs, one process, {os.cpu_count()} CPU cores "
        f"({platform.processor() or platform.machine()}), rustbpe "
        f"{metadata.version('rustbpe')}, tiktoken {tiktoken.__version__}. 1 MB = 10^6 bytes; "
        "\"pydoc prose\" is Python's help topics repeated to 1 MB, \"sample stories\" the "
        "first 1 MB of the built-in stories.", "",
        "Training a BPE table with rustbpe (GPT-4 split pattern; vocabulary includes the 4 "
        "specials; the stories' small word list runs out of merges below 1,024):", "",
        "| text | size | vocab asked | vocab learned | time | throughput |",
        "|---|---:|---:|---:|---:|---:|",
        *rows_train, "", *notes, "",
        "Encoding with the table trained for vocab 4,096. Columns are MB/s; tiktoken is what tfstudio uses, "
        "rustbpe's own encoder and the Python reference must (and do) give identical ids, and the "
        "byte tokenizer (UTF-8 encode, no merging) is the ceiling for any tokenizer:", "",
        "| text | bytes/token | tiktoken | rustbpe encode | byte level | Python BPE (64 KB) | "
        "tiktoken vs Python |", "|---|---:|---:|---:|---:|---:|---:|", *rows_encode, ""])
    replace_section(SECTION, body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TFSTUDIO_CACHE"] = cache  # never time a cache hit
        rows_train, rows_encode, notes = run(args.reps)
    print("\n".join(rows_train + notes + rows_encode))
    if not args.no_write:
        write_section(rows_train, rows_encode, notes, args.reps)
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
