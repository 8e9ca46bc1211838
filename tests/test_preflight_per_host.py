"""The memory pre-flight counts the processes that share one memory: on the CPU (one host
memory) N processes need N copies; on GPUs each process has a card of its own."""
import pytest

import tfstudio
from tfstudio.runs.preflight import MemoryRefusal, check_training_memory, training_need

SETTINGS = dict(batch=2, seq_len=16, grad_accum=1, precision="fp32", world_size=2)


@pytest.fixture(scope="module")
def graph():
    return tfstudio.load_graph("tiny-gpt")


@pytest.fixture(scope="module")
def per_process(graph):
    return training_need(graph, batch=2, seq_len=16, precision="fp32", world_size=2).total


def test_two_cpu_processes_need_two_copies_of_host_memory(graph, per_process):
    check_training_memory(graph, device="cpu", available=2 * per_process, **SETTINGS)
    with pytest.raises(MemoryRefusal, match=r"per process x 2"):
        check_training_memory(graph, device="cpu", available=2 * per_process - 1, **SETTINGS)


def test_two_gpu_processes_each_need_one_copy_on_their_own_card(graph, per_process):
    check_training_memory(graph, device="cuda:0", available=per_process, **SETTINGS)
    with pytest.raises(MemoryRefusal) as refusal:
        check_training_memory(graph, device="cuda:0", available=per_process - 1, **SETTINGS)
    assert "per process" not in str(refusal.value)
