"""Training events (tfstudio/train/events.py): as dicts, in the metrics log, truncated to a
checkpoint, read back."""
from tfstudio.train.events import StepMetrics


def test_an_event_is_a_dict_with_its_kind_and_comes_back_from_it():
    from tfstudio.train.events import EVENT_TYPES, Failed, event_from_dict
    event = StepMetrics(4, 2.5, 0.01, 1.5, {"embed": 0.5}, 100.0, 2.0, 64)
    data = event.to_dict()
    assert data == {"kind": "StepMetrics", "step": 4, "loss": 2.5, "lr": 0.01, "grad_norm": 1.5,
                    "layer_grad_norms": {"embed": 0.5}, "tokens_per_s": 100.0,
                    "elapsed_s": 2.0, "tokens_seen": 64, "mfu": None}
    assert event_from_dict(data) == event
    assert data["kind"] == "StepMetrics"            # the caller's dict is left as it was
    assert Failed(3, "nan", "m").kind == "Failed"
    assert sorted(EVENT_TYPES) == sorted(["Started", "StepMetrics", "EvalMetrics",
                                          "RouterMetrics", "Probe", "CheckpointSaved",
                                          "Finished", "Failed"])
    assert all(EVENT_TYPES[name].__name__ == name for name in EVENT_TYPES)


def test_the_metrics_log_appends_one_json_line_per_event_but_no_probes(tmp_path):
    import json

    from tfstudio.train.events import Finished, MetricsLog, Probe
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"kind": "Started"}\n', encoding="utf-8")    # earlier lines are kept
    log = MetricsLog(str(path))
    log(StepMetrics(1, float("nan"), 0.1, 1.0, {}, 1.0, 1.0, 8))   # NaN is written, not refused
    log(Probe(1, {"big": [1, 2, 3]}))
    log(Finished(1, "completed", 2.0))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and lines[0] == '{"kind": "Started"}'
    assert '"loss": NaN' in lines[1]
    assert json.loads(lines[2]) == {"kind": "Finished", "step": 1, "reason": "completed",
                                    "final_loss": 2.0, "elapsed_s": 0.0, "note": ""}


def test_truncating_keeps_what_came_up_to_the_checkpoint_and_no_ends(tmp_path):
    import json

    from tfstudio.train.events import CheckpointSaved, Failed, Finished, MetricsLog
    path = tmp_path / "metrics.jsonl"
    log = MetricsLog(path)
    for step in (1, 2, 3):
        log(StepMetrics(step, 1.0 / step, 0.1, 1.0, {}, 1.0, 1.0, 8 * step))
    log(CheckpointSaved(2, "ckpt"))
    log(Finished(2, "stopped"))
    log(Failed(1, "error", "x"))
    with open(path, "ab") as f:   # a hand-written line without a step, a torn line, bad bytes
        f.write(b'{"kind": "Started", "total_steps": 3}\n{"kind": "StepMe\n\xff\xfe\n')
    log.truncate_after(2)
    kept = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(d["kind"], d.get("step")) for d in kept] == [
        ("StepMetrics", 1), ("StepMetrics", 2), ("CheckpointSaved", 2), ("Started", None)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.jsonl"]   # no temporary left
    log.truncate_after(0)
    assert [json.loads(line)["kind"] for line in path.read_text().splitlines()] == ["Started"]


def test_reading_events_skips_lines_that_are_no_event(tmp_path):
    from tfstudio.train.events import CheckpointSaved, read_events
    path = tmp_path / "metrics.jsonl"
    assert read_events(path) == []                                       # no file yet
    path.write_bytes(b'{"kind": "CheckpointSaved", "step": 2, "path": "p"}\n'
                     b'[1, 2]\n'                                          # not an object
                     b'{"kind": "Nothing", "step": 1}\n'                  # no such event
                     b'{"step": 1}\n'                                     # no kind
                     b'{"kind": "CheckpointSaved", "step": 3, "oops": 1}\n'   # wrong fields
                     b'\xff\n{"kind": "CheckpointSaved", "step": 4, "path": "q"}')
    assert read_events(path) == [CheckpointSaved(2, "p"), CheckpointSaved(4, "q")]
