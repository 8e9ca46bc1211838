"""Distributed training (tfstudio/train/distributed.py) in one process: the launch environment,
joining and leaving, averaged losses, each rank's slice, DDP and FSDP wrapping."""
from types import SimpleNamespace

import pytest
import torch
from train_stand_ins import TWO_RANKS

import tfstudio
from tfstudio.train import distributed as dist_module
from tfstudio.train.distributed import DistInfo


def test_the_launch_environment_gives_rank_world_and_local_rank(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert dist_module.from_environment() == DistInfo()
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("RANK", "0")
    assert dist_module.from_environment() == DistInfo()
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    assert dist_module.from_environment() == DistInfo(1, 2, 0)      # two processes: enabled
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "3")
    assert dist_module.from_environment() == DistInfo(3, 4, 0)
    monkeypatch.setenv("LOCAL_RANK", "1")
    info = dist_module.from_environment()
    assert info == DistInfo(3, 4, 1) and info.enabled and not info.is_main
    assert DistInfo().is_main and not DistInfo().enabled and DistInfo(0, 2).is_main


class FakeGroup:
    """torch.distributed as seen by one rank of two: collectives combine this rank's tensor
    with ``other`` (the peer's value) by the op asked for."""

    def __init__(self, monkeypatch, other=0.0, initialized=False):
        self.other, self.initialized, self.calls = other, initialized, []
        d = torch.distributed
        for name in ("init_process_group", "destroy_process_group", "barrier", "all_reduce",
                     "is_initialized"):
            monkeypatch.setattr(d, name, getattr(self, name))
        monkeypatch.setattr(torch.cuda, "set_device", lambda dev: self.calls.append(("set", dev)))

    def is_initialized(self):
        return self.initialized

    def init_process_group(self, **kw):
        self.calls.append(("init", kw))

    def destroy_process_group(self):
        self.calls.append("destroy")

    def barrier(self):
        self.calls.append("barrier")

    def all_reduce(self, t, op):
        self.calls.append(("all_reduce", op, t.dtype))
        other = torch.tensor([self.other], dtype=t.dtype)
        t.copy_(t + other if op == torch.distributed.ReduceOp.SUM else torch.minimum(t, other))


def test_joining_picks_gloo_on_the_cpu_and_nccl_on_this_ranks_gpu(monkeypatch):
    group = FakeGroup(monkeypatch)
    cpu = torch.device("cpu")
    assert dist_module.init(DistInfo(), cpu) is cpu and group.calls == []
    assert dist_module.init(TWO_RANKS, cpu) == cpu
    assert group.calls == [("init", {"backend": "gloo", "rank": 1, "world_size": 2})]
    group.calls.clear()
    assert dist_module.init(DistInfo(0, 4, 3), torch.device("cuda")) == torch.device("cuda", 3)
    assert group.calls == [("set", torch.device("cuda", 3)),
                           ("init", {"backend": "nccl", "rank": 0, "world_size": 4})]
    group.calls.clear()
    group.initialized = True                       # joined already: left as it is
    assert dist_module.init(TWO_RANKS, torch.device("cuda")) == torch.device("cuda")
    assert group.calls == []


def test_leaving_waits_for_the_peers_only_when_asked(monkeypatch):
    group = FakeGroup(monkeypatch, initialized=True)
    dist_module.shutdown(TWO_RANKS)
    assert group.calls == ["destroy"]
    dist_module.shutdown(TWO_RANKS, wait_for_peers=True)
    assert group.calls == ["destroy", "barrier", "destroy"]
    group.calls.clear()
    dist_module.shutdown(DistInfo(), wait_for_peers=True)      # one process: nothing to leave
    group.initialized = False
    dist_module.shutdown(TWO_RANKS, wait_for_peers=True)       # never joined
    assert group.calls == []


def test_the_loss_is_averaged_over_ranks_in_double_precision(monkeypatch):
    group = FakeGroup(monkeypatch, other=0.2)
    cpu = torch.device("cpu")
    assert dist_module.mean_across_ranks(0.1, DistInfo(), cpu) == 0.1 and group.calls == []
    assert dist_module.mean_across_ranks(0.1, TWO_RANKS, cpu) == (0.1 + 0.2) / 2
    assert group.calls == [("all_reduce", torch.distributed.ReduceOp.SUM, torch.float64)]


@pytest.mark.parametrize("mine, theirs, agreed", [(True, 1, True), (True, 0, False),
                                                  (False, 1, False), (False, 0, False)])
def test_ranks_agree_only_when_every_rank_holds(mine, theirs, agreed, monkeypatch):
    group = FakeGroup(monkeypatch, other=theirs)
    assert dist_module.all_ranks_agree(mine, TWO_RANKS, torch.device("cpu")) is agreed
    assert dist_module.all_ranks_agree(mine, DistInfo(), torch.device("cpu")) is mine
    assert [c[:2] for c in group.calls] == [("all_reduce", torch.distributed.ReduceOp.MIN)]


def test_each_rank_takes_its_own_slice_of_the_global_batch():
    assert [dist_module.local_rows(12, DistInfo(r, 3)) for r in range(3)] == \
        [(0, 4), (4, 8), (8, 12)]
    assert dist_module.local_rows(5, DistInfo()) == (0, 5)
    with pytest.raises(ValueError) as uneven:
        dist_module.local_rows(10, DistInfo(0, 4))
    assert str(uneven.value) == ("batch size 10 does not split evenly over 4 processes; pick a "
                                 "multiple of 4")


def test_a_sharded_scalar_is_read_whole():
    plain = torch.tensor(2.0)
    assert dist_module.as_local(plain) is plain
    sharded = SimpleNamespace(full_tensor=lambda: torch.tensor(5.0))
    assert float(dist_module.as_local(sharded)) == 5.0


@pytest.fixture
def one_rank_group(tmp_path):
    """A real gloo process group of one rank (so DDP and FSDP2 can wrap in this process)."""
    import torch.distributed as d
    d.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0,
                         world_size=1)
    try:
        yield
    finally:
        d.destroy_process_group()


def test_one_process_trains_the_model_itself_and_keeps_its_weights():
    from tfstudio.compiler import compile_graph
    model = compile_graph(tfstudio.load_graph("tiny-gpt"))
    for parallel in ("ddp", "fsdp"):
        assert dist_module.wrap_for_training(model, DistInfo(), parallel,
                                             torch.device("cpu")) is model
        assert dist_module.full_weights(model, DistInfo(), parallel) is None
    assert dist_module.full_weights(model, TWO_RANKS, "ddp") is None   # replicas are whole


def test_ddp_wraps_the_model_for_gradient_averaging(one_rank_group):
    from torch.nn.parallel import DistributedDataParallel

    from tfstudio.compiler import compile_graph
    model = compile_graph(tfstudio.load_graph("tiny-gpt"))
    wrapped = dist_module.wrap_for_training(model, DistInfo(0, 2), "ddp", torch.device("cpu"))
    assert isinstance(wrapped, DistributedDataParallel) and wrapped.module is model
    assert wrapped.device_ids is None                 # CPU replicas name no device


def test_fsdp_shards_each_layer_copy_and_the_root_and_gathers_whole_weights(one_rank_group):
    from torch.distributed.fsdp import FSDPModule

    from tfstudio.compiler import compile_graph
    torch.manual_seed(0)
    model = compile_graph(tfstudio.load_graph("tiny-gpt"))
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    wrapped = dist_module.wrap_for_training(model, DistInfo(0, 2), "fsdp", torch.device("cpu"))
    assert wrapped is model and isinstance(model, FSDPModule)
    sharded = {key for key, module in model.blocks() if isinstance(module, FSDPModule)}
    assert sharded == {("layers", 0), ("layers", 1)}
    whole = dist_module.full_weights(model, DistInfo(0, 2), "fsdp")
    assert whole.keys() == before.keys()
    for name, value in before.items():
        assert type(whole[name]) is torch.Tensor and whole[name].device.type == "cpu"
        assert torch.equal(whole[name], value), name
