"""tfstudio tokenizers <-> Hugging Face ``tokenizer.json`` (the ``tokenizers`` library format
that ``PreTrainedTokenizerFast`` loads).

Export (needs the ``tokenizers`` package, which transformers brings):

- byte: a byte-level BPE with the 256 byte symbols as ids 0..255 and no merges;
- bpe:N and tiktoken:NAME: a byte-level BPE whose vocabulary is the tiktoken ranks (id = rank)
  and whose merges are recovered from the ranks (each token's merge is the split that BPE,
  using only lower ranks, arrives at), with the same split regex;
- char: a word-level model over single characters, ``<|unk|>`` for the rest.

Special tokens keep their ids. One difference is inherent to HF: text that literally contains a
special token's name ("<|endoftext|>") encodes as that special token there, while tfstudio's
``encode`` never produces specials.

Import: the exact tfstudio tokenizer when the folder came from tfstudio
(``tfstudio_tokenizer.json``); otherwise a byte-level BPE ``tokenizer.json`` (GPT-2 style) whose
merges agree with its id order becomes a tfstudio "bpe" tokenizer. SentencePiece-style
tokenizers (LLaMA, Mistral: Metaspace with byte fallback) and WordPiece (BERT) have no tfstudio
counterpart and are reported as such.
"""
from __future__ import annotations

import base64
import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..data.tokenizer import BOS, EOT, MASK, PAD, SPECIAL_TOKENS, UNK

SIDECAR = "tfstudio_tokenizer.json"
# GPT-2's pre-tokenizer regex (what ByteLevel(use_regex=True) applies)
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
WHOLE_TEXT = r"[\s\S]+"  # no pre-split


@lru_cache(maxsize=1)
def byte_symbols() -> dict[int, str]:
    """GPT-2's printable stand-in character for each byte (as ``tokenizers`` ByteLevel uses)."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    symbols, extra = {b: chr(b) for b in printable}, 0
    for b in range(256):
        if b not in symbols:
            symbols[b] = chr(256 + extra)
            extra += 1
    return symbols


def _to_symbols(data: bytes) -> str:
    table = byte_symbols()
    return "".join(table[b] for b in data)


def _from_symbols(text: str) -> bytes:
    reverse = {c: b for b, c in byte_symbols().items()}
    return bytes(reverse[c] for c in text)


# ================================================================================ export
def export_files(tokenizer, out_dir: Path, model_max_length: int) -> tuple[list[str], str]:
    """Write ``tokenizer.json`` + ``tokenizer_config.json`` (when possible) and the exact
    ``tfstudio_tokenizer.json``; returns (files written, a sentence on what was exported)."""
    files = [SIDECAR]
    (out_dir / SIDECAR).write_text(json.dumps(tokenizer.to_dict()), encoding="utf-8")
    try:
        hf = build_hf_tokenizer(tokenizer)
    except ImportError:
        return files, (f"tokenizer: only {SIDECAR} (tfstudio's own format); install the "
                       "'tokenizers' package to write an HF tokenizer.json as well")
    hf.save(str(out_dir / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast",
              "model_max_length": int(model_max_length), "clean_up_tokenization_spaces": False}
    roles = {"eos_token": EOT, "bos_token": BOS, "pad_token": PAD, "mask_token": MASK,
             "unk_token": UNK}
    config.update({role: name for role, name in roles.items() if name in tokenizer.specials})
    (out_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2), "utf-8")
    files += ["tokenizer.json", "tokenizer_config.json"]
    return files, (f"tokenizer: {tokenizer.name} as tokenizer.json (PreTrainedTokenizerFast, "
                   f"{tokenizer.vocab_size} ids, same ids as tfstudio)")


def build_hf_tokenizer(tokenizer):
    """A ``tokenizers.Tokenizer`` that gives the same ids as ``tokenizer`` on ordinary text."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    specials = dict(tokenizer.specials)
    if tokenizer.kind == "char":
        vocab = {ch: i for i, ch in enumerate(tokenizer.alphabet)} | specials
        hf = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
        hf.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
        hf.decoder = decoders.Fuse()
    else:
        ranks = _ranks(tokenizer)
        vocab = {_to_symbols(token): rank for token, rank in ranks.items()}
        merges = [(_to_symbols(a), _to_symbols(b)) for a, b in merges_from_ranks(ranks)]
        vocab.update(specials)
        hf = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
        byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
        pattern = _pattern(tokenizer)
        hf.pre_tokenizer = byte_level if pattern is None else pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(pattern), behavior="isolated"), byte_level])
        hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([AddedToken(name, special=True, normalized=False)
                           for name in sorted(specials, key=specials.get)])
    return hf


def _ranks(tokenizer) -> dict[bytes, int]:
    if tokenizer.kind == "byte":
        return {bytes((b,)): b for b in range(256)}
    return {tokenizer.encoding.decode_single_token_bytes(i): i
            for i in range(tokenizer.ordinary_vocab_size)}


def _pattern(tokenizer) -> str | None:
    state = tokenizer.to_dict()
    if tokenizer.kind == "bpe":
        return state["pattern"]
    if tokenizer.kind == "tiktoken":
        from ..data.named_encodings import NAMED_ENCODINGS
        return NAMED_ENCODINGS[state["encoding"]].pattern
    return None  # byte: no pre-split needed, every byte is its own token


def merges_from_ranks(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merge list that reproduces tiktoken's rank-ordered BPE: for each multi-byte token,
    in rank order, the two parts BPE reaches using only lower-ranked merges."""
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue
        parts = _bpe(ranks, token, rank)
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {rank}) is not a merge of two lower-ranked "
                             "tokens; this vocabulary is not a BPE merge table")
        merges.append((parts[0], parts[1]))
    return merges


def _bpe(ranks: dict[bytes, int], token: bytes, max_rank: int) -> list[bytes]:
    parts = [bytes((b,)) for b in token]
    while len(parts) > 1:
        best, best_rank = None, max_rank
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < best_rank:
                best, best_rank = i, r
        if best is None:
            break
        parts[best:best + 2] = [parts[best] + parts[best + 1]]
    return parts


# ================================================================================ import
def import_tokenizer(folder: Path) -> tuple[Any | None, str]:
    """(a tfstudio tokenizer or None, a sentence saying which and why)."""
    from ..data import DataError, tokenizer_from_dict
    from ..data.bpe import bpe_from_state

    sidecar = folder / SIDECAR
    if sidecar.exists():
        try:
            tok = tokenizer_from_dict(json.loads(sidecar.read_text("utf-8")), str(sidecar))
        except (DataError, ValueError) as exc:
            return None, f"tokenizer: {SIDECAR} could not be read ({exc})"
        return tok, f"tokenizer: {tok.name}, restored exactly from {SIDECAR}"
    path = folder / "tokenizer.json"
    if not path.exists():
        return None, ("tokenizer: the folder has no tokenizer.json; text views need one "
                      "(add a tfstudio tokenizer.json to the run)")
    raw = path.read_bytes()
    try:
        state, added = _bpe_state(json.loads(raw))
    except _Unrepresentable as exc:
        return None, f"tokenizer: not carried, {exc}"
    state["corpus_fingerprint"] = hashlib.sha256(raw).hexdigest()
    state["name"] = f"hf:{folder.name}"
    try:
        tok = bpe_from_state(state)
    except (DataError, ValueError) as exc:
        return None, f"tokenizer: not carried, {exc}"
    extra = (f"; tfstudio's {', '.join(added)} added as ids "
             f"{', '.join(str(tok.specials[n]) for n in added)}" if added else "")
    return tok, (f"tokenizer: byte-level BPE from tokenizer.json ({tok.ordinary_vocab_size} "
                 f"ordinary tokens, same ids{extra})")


class _Unrepresentable(ValueError):
    pass


def _bpe_state(data: dict) -> tuple[dict, list[str]]:
    """A tfstudio "bpe" tokenizer state for a byte-level BPE tokenizer.json (and the tfstudio
    special tokens it had to add), or raise saying why it has no tfstudio counterpart."""
    model = data.get("model") or {}
    if model.get("type") != "BPE":
        raise _Unrepresentable(f"its {model.get('type', 'unknown')} model is not byte-level BPE "
                               "(WordPiece, Unigram and SentencePiece tokenizers have no "
                               "tfstudio counterpart)")
    if data.get("normalizer"):
        raise _Unrepresentable("it normalises text first, which tfstudio's tokenizers never do")
    pattern = _hf_split_pattern(data.get("pre_tokenizer"))
    added = data.get("added_tokens") or []
    if any(not t.get("special") for t in added):
        raise _Unrepresentable("it has non-special added tokens, which tiktoken cannot match")
    special_names = {t["content"]: int(t["id"]) for t in added}
    ordinary = {tok: i for tok, i in model["vocab"].items() if tok not in special_names}
    order = sorted(ordinary.items(), key=lambda item: item[1])
    if [i for _, i in order] != list(range(len(order))):
        raise _Unrepresentable("its ordinary tokens do not take ids 0..n-1 (tfstudio "
                               "numbers special tokens after them)")
    try:
        ranks = {_from_symbols(tok): i for tok, i in order}
    except KeyError:
        raise _Unrepresentable("its vocabulary is not written in byte-level symbols") from None
    if any(bytes((b,)) not in ranks for b in range(256)):
        raise _Unrepresentable("it lacks some of the 256 single-byte tokens")
    _check_merges(model.get("merges") or [], ranks)
    specials, added = dict(special_names), []
    next_id = max([len(ranks) - 1, *specials.values()]) + 1
    for name in SPECIAL_TOKENS:
        if name not in specials:
            specials[name] = next_id
            added.append(name)
            next_id += 1
    ranked = sorted(ranks.items(), key=lambda item: item[1])
    return {"format_version": 1, "kind": "bpe", "name": "hf", "pattern": pattern,
            "ranks": [base64.b64encode(tok).decode("ascii") for tok, _ in ranked],
            "specials": specials, "trainer": "imported from a Hugging Face tokenizer.json",
            "corpus_fingerprint": ""}, added


def _hf_split_pattern(pre) -> str:
    """The split regex of a byte-level pre-tokenizer, or raise."""
    steps = pre.get("pretokenizers", []) if pre and pre.get("type") == "Sequence" else [pre]
    steps = [s for s in steps if s]
    if not steps or steps[-1].get("type") != "ByteLevel":
        raise _Unrepresentable("its pre-tokenizer is not byte-level")
    byte_level = steps[-1]
    if byte_level.get("add_prefix_space"):
        raise _Unrepresentable("it adds a prefix space, which tfstudio's tokenizers never do")
    if len(steps) == 1:  # GPT-2's own regex, or none: the whole text is one piece
        return GPT2_PATTERN if byte_level.get("use_regex", True) else WHOLE_TEXT
    if len(steps) == 2 and steps[0].get("type") == "Split" and not byte_level.get("use_regex"):
        split = steps[0]
        regex = (split.get("pattern") or {}).get("Regex")
        if regex and split.get("behavior") == "Isolated" and not split.get("invert"):
            return regex
    raise _Unrepresentable("its pre-tokenizer chain has no tiktoken counterpart")


def _check_merges(merges: list, ranks: dict[bytes, int]) -> None:
    """tiktoken merges by the rank of the result; HF by the merge's position. They agree when
    every multi-byte token is made by exactly one merge and merges come in rank order."""
    made, last = set(), -1
    for merge in merges:
        a, b = merge.split(" ") if isinstance(merge, str) else merge
        token = _from_symbols(a) + _from_symbols(b)
        rank = ranks.get(token)
        if rank is None or rank <= last:
            raise _Unrepresentable("its merges are not in the order of its token ids")
        made.add(token)
        last = rank
    if any(len(tok) > 1 and tok not in made for tok in ranks):
        raise _Unrepresentable("some multi-byte tokens are made by no merge")
