"""Stand-ins shared by the training tests: a tiny run's settings, a real file-size limit, the second of two ranks, a
model whose logits are fixed, a model whose head is tied to its embedding."""
import contextlib
import resource

import torch

from tfstudio.train.distributed import DistInfo

# tiny-gpt on the small stories, byte tokens: a step takes milliseconds
TINY = dict(corpus="sample:small", tokenizer="byte", batch_size=2, seq_len=16,
            warmup_steps=0, eval_every=0)



@contextlib.contextmanager
def file_size_limit(limit: int):
    """This process's soft RLIMIT_FSIZE (``ulimit -f``) lowered to ``limit`` bytes, then put
    back: a real limit, under which a longer write fails with EFBIG (Python ignores
    SIGXFSZ)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


TWO_RANKS = DistInfo(rank=1, world_size=2, local_rank=1)


class FixedLogits(torch.nn.Module):
    """Returns the logits it was given, whatever the input."""

    def __init__(self, logits):
        super().__init__()
        self.logits = logits

    def forward(self, *inputs):
        return self.logits


class Tied(torch.nn.Module):
    """An embedding and an output head sharing one matrix, plus a bias: the tie of a language
    model's head in miniature."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(5, 3)
        self.head = torch.nn.Linear(3, 5)
        self.head.weight = self.emb.weight


def stand_in_session(trainer, **parts):
    """Give a trainer that was never run the built parts a test drives it with (the rest
    None: a part the test did not give is one the code under test must not touch)."""
    import dataclasses

    from tfstudio.train.trainer import Session

    fields = {f.name: None for f in dataclasses.fields(Session)}
    fields.update(device=torch.device("cpu"), precision="fp32", layer_params={},
                  flops_per_token=0.0)
    fields.update(parts)
    trainer.session = Session(**fields)
    return trainer.session
