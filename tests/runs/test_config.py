"""TrainConfig's checks (tfstudio/runs/config.py): each setting's range, named in the message."""
import pytest

from tfstudio.runs.config import TrainConfig


@pytest.mark.parametrize("name", ["steps", "batch_size", "seq_len", "grad_accum",
                                  "eval_batches", "log_every"])
def test_each_count_must_be_at_least_one(name):
    TrainConfig(**{name: 1}).check()
    with pytest.raises(ValueError) as caught:
        TrainConfig(**{name: 0}).check()
    assert str(caught.value) == f"{name} must be at least 1; got 0"


@pytest.mark.parametrize("settings,message", [
    *(({name: -1}, f"{name} must be 0 or more; got -1") for name in (
        "lr_decay_steps", "warmup_steps", "eval_every", "checkpoint_every", "keep_checkpoints",
        "probe_every")),
    ({"lr": 0.0}, "lr must be positive; got 0.0"),
    ({"precision": "fp8"}, "precision must be auto, fp32, bf16 or fp16; got fp8"),
    ({"parallel": "tp"}, "parallel must be ddp or fsdp; got tp"),
    ({"val_fraction": 0.0}, "val_fraction must be between 0 and 1; got 0.0"),
    ({"val_fraction": 1.0}, "val_fraction must be between 0 and 1; got 1.0"),
])
def test_settings_out_of_range_are_named(settings, message):
    with pytest.raises(ValueError) as caught:
        TrainConfig(**settings).check()
    assert str(caught.value) == message


@pytest.mark.parametrize("settings", [
    *({name: 0} for name in ("lr_decay_steps", "warmup_steps", "eval_every",
                             "checkpoint_every", "keep_checkpoints", "probe_every")),
    {"lr": 1e-9}, {"val_fraction": 0.01}, {"val_fraction": 0.99},
    *({"precision": p} for p in ("auto", "fp32", "bf16", "fp16")),
    *({"parallel": p} for p in ("ddp", "fsdp"))])
def test_settings_at_the_edge_of_their_range_are_accepted(settings):
    TrainConfig(**settings).check()


def test_unknown_settings_are_named_in_order():
    with pytest.raises(ValueError) as caught:
        TrainConfig.from_dict({"zeta": 1, "steps": 3, "alpha": 2})
    assert str(caught.value) == "unknown training settings: alpha, zeta"
    assert TrainConfig.from_dict({"steps": 3}) == TrainConfig(steps=3)
