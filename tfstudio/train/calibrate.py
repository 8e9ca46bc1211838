"""One calibration case of the memory pre-flight, run as its own process so that its high-water
RSS is the peak of the training it did (the bench and the calibration test both run it):

    python -m tfstudio.train.calibrate PRESET BATCH LENGTH TOKENIZER [--steps N]

It notes its resident memory where the pre-flight would run (a run's imports made, frozen, as
``tfstudio train`` makes them: ``train/preload.py``; nothing built), trains ``--steps`` steps on
sample:small on the CPU in fp32, and prints one JSON line: how the run ended, the vocabulary,
that resident memory, the step's need, the pre-flight's estimate of the peak and the measured
peak (``VmHWM``). TOKENIZER is a tokenizer spec, or ``wide:N``: byte ids under an N-row
embedding and LM head (GPT-2's width is 50,257), since the memory depends on the head's width,
not on which ids are fed.
"""
from __future__ import annotations

import argparse
import json

import psutil

from tfstudio.data import build_tokenizer, load_corpus
from tfstudio.data.simple_tokenizers import ByteTokenizer
from tfstudio.presets import load_preset
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.preflight import estimated_peak_rss, training_need
from tfstudio.train.preload import TRAINING, import_frozen


def wide_byte_tokenizer(rows: int) -> ByteTokenizer:
    """Byte ids under a head ``rows`` wide."""
    class Wide(ByteTokenizer):
        ordinary_vocab_size = rows
    return Wide()


def peak_rss() -> int:
    """This process's high-water RSS in bytes: VmHWM, not ru_maxrss, which Linux carries over
    from the parent through fork and exec (a child of a 1 GB pytest worker would report 1 GB)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))


def measure(preset: str, batch: int, length: int, tokenizer_spec: str, steps: int) -> dict:
    import_frozen(TRAINING)  # as `tfstudio train` imports them
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    from tfstudio.train.trainer import Trainer

    corpus = load_corpus("sample:small")
    if tokenizer_spec.startswith("wide:"):
        tokenizer = wide_byte_tokenizer(int(tokenizer_spec.split(":")[1]))
    else:
        tokenizer = build_tokenizer(tokenizer_spec, corpus)
    resident = psutil.Process().memory_info().rss
    config = TrainConfig(corpus="sample:small", tokenizer="byte", steps=steps, batch_size=batch,
                         seq_len=length, warmup_steps=0, eval_every=0, device="cpu",
                         precision="fp32", no_memory_check=True)
    trainer = Trainer(load_preset(preset), config, tokenizer=tokenizer, corpus=corpus)
    end = trainer.run()
    need = training_need(fit_graph_to_tokenizer(load_preset(preset), trainer.tokenizer),
                         batch=batch, seq_len=length, precision="fp32")
    return {"end": end.kind, "vocab": tokenizer.vocab_size, "resident": resident,
            "need": need.total, "estimate": estimated_peak_rss(need, resident),
            "peak": peak_rss()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("preset")
    parser.add_argument("batch", type=int)
    parser.add_argument("length", type=int)
    parser.add_argument("tokenizer", help="a tokenizer spec (byte, char, bpe:N) or wide:N")
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()
    print(json.dumps(measure(args.preset, args.batch, args.length, args.tokenizer, args.steps)))


if __name__ == "__main__":
    main()
