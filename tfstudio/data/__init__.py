"""The data layer: corpora, tokenizers, token caches and batches for training.

Typical use (the trainer)::

    from tfstudio.data import load_corpus, build_tokenizer, token_array, split_train_val
    from tfstudio.data import WindowSampler

    corpus = load_corpus("sample")                  # or "pydoc", "task:reverse", a path
    tokenizer = build_tokenizer("bpe:1024", corpus) # or "byte", "char", "tiktoken:gpt2"
    train, val = split_train_val(token_array(corpus, tokenizer))
    sampler = WindowSampler(train, context=64, batch_size=32, seed=0)
    x, y = sampler.next_batch()                     # LongTensors (32, 64)
    tokenizer.save(run_dir)                         # load_tokenizer(run_dir) decodes the same

Tasks (``corpus.task`` is set for "task:..." specs) use ``TaskSampler`` for batches with an
answer mask (causal LM) or teacher-forcing tensors (encoder-decoder); masked-LM objectives
pass any id batch through ``mlm_batch``. Only the batching functions import torch, and only
when called. Caches live under ``~/.cache/tfstudio`` (override with ``TFSTUDIO_CACHE``).

Modules: ``corpus`` (specs, documents, fingerprints), ``storygen`` (the sample stories),
``tasks`` (synthetic tasks), ``textio`` (streaming UTF-8 files), ``tokenizer`` (the interface),
``tokenizer_factory`` (specs and saved ones to tokenizers), ``simple_tokenizers`` (byte, char), ``bpe`` (rustbpe + tiktoken), ``named_encodings``
(gpt2, cl100k_base, ... offline), ``chunking`` (safe cut points), ``token_cache`` (memmapped
ids, train/val split), ``windows`` (causal-LM sampler), ``masking`` (MLM), ``task_batches``.
"""
from .corpus import DEFAULT_CORPUS, Corpus, CorpusInfo, list_corpora, load_corpus
from .errors import DataError
from .masking import IGNORE_INDEX, mask_tokens, mlm_batch
from .paths import cache_dir
from .task_batches import (Seq2SeqBatch, TaskLMBatch, TaskSampler, encode_example,
                           seq2seq_batch, task_lm_batch, task_seq2seq_batch)
from .tasks import TASKS, Task, TaskExample, parse_task
from .token_cache import split_train_val, token_array
from .tokenizer import SPECIAL_TOKENS, Tokenizer
from .tokenizer_factory import build_tokenizer, load_tokenizer, tokenizer_from_dict
from .windows import WindowSampler, eval_windows

__all__ = [
    "DEFAULT_CORPUS", "Corpus", "CorpusInfo", "list_corpora", "load_corpus", "DataError",
    "IGNORE_INDEX", "mask_tokens", "mlm_batch", "cache_dir", "Seq2SeqBatch", "TaskLMBatch",
    "TaskSampler", "encode_example", "seq2seq_batch", "task_lm_batch", "task_seq2seq_batch",
    "TASKS", "Task", "TaskExample", "parse_task", "split_train_val", "token_array",
    "SPECIAL_TOKENS", "Tokenizer", "build_tokenizer", "load_tokenizer", "tokenizer_from_dict",
    "WindowSampler", "eval_windows",
]
