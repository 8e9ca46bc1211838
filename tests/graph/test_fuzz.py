"""Fuzzing graph files in the suite: a few hundred mutated preset documents per run (the
strategy and the check are bench/fuzz_graphs.py's, which runs 10,000). Each either loads and
then survives validation, costs, `tfstudio inspect` and (small and valid) compile_graph, or is
refused with GraphFileError; anything else fails, and hypothesis shrinks it to a small case."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from fuzz_graphs import CLEAN, mutated_documents, outcome  # noqa: E402


@settings(max_examples=200, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@pytest.mark.slow
@given(mutated_documents())
def test_a_mutated_graph_file_loads_or_is_refused_cleanly(text):
    result = outcome(text)
    assert result in CLEAN, result
