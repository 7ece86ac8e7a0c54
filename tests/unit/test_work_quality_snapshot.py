"""work-quality snapshots: Go's encoding/json, byte for byte, and Go's reading rules.

The expected strings below are what Go writes (tests/unit/test_work_quality_go.py checks every
writer output against Go itself when a Go toolchain is present)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from evalledger.suites.work_quality import go_json, snapshot as s
from evalledger.suites.work_quality.snapshot import Aggregate, Delta, JudgeVerdict, Metrics, Snapshot, SnapshotError

AT = datetime(2026, 6, 25, 10, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("value, go", [
    (0.0, "0"), (-0.0, "-0"), (1.0, "1"), (100.0, "100"), (0.1, "0.1"), (-2.5, "-2.5"),
    (0.30000000000000004, "0.30000000000000004"), (0.000001, "0.000001"), (1e-7, "1e-7"),
    (1.5e-10, "1.5e-10"), (1e-100, "1e-100"), (1e20, "100000000000000000000"), (1e21, "1e+21"),
    (1.2345e25, "1.2345e+25"), (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
    (12345678.9, "12345678.9"), (0.7333333333333333, "0.7333333333333333"),
])
def test_floats_as_go_formats_a_float64(value, go):
    assert go_json.go_float(value) == go


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_floats_are_refused_as_go_refuses_them(bad):
    with pytest.raises(SnapshotError, match="unsupported value"):
        go_json.go_float(bad)


@pytest.mark.parametrize("text, go", [
    ("plain", '"plain"'), ('q"b\\', '"q\\"b\\\\"'), ("<a & b>", '"\\u003ca \\u0026 b\\u003e"'),
    ("l1\nl2\r\tx", '"l1\\nl2\\r\\tx"'), ("\x01\x1f\x7f", '"\\u0001\\u001f\x7f"'),
    ("\u2028\u2029", '"\\u2028\\u2029"'), ("é🙂", '"é🙂"'), ("lone \udc80", '"lone \ufffd"'),
])
def test_strings_escaped_as_go_escapes_them(text, go):
    assert go_json.go_string(text) == go


def test_backspace_and_form_feed_never_reach_a_file():
    # Go 1.22 changed their escapes; a space reads the same to every Go release.
    assert go_json.portable_text("a\bb\fc") == "a b c"
    snap = Snapshot(kind="bot", name="n", run_id="r", at=AT, task="x\by")
    assert '"task": "x y"' in go_json.dumps(snap)


@pytest.mark.parametrize("at, nanos, go", [
    (AT, None, "2026-06-25T10:00:00Z"),
    (AT.replace(microsecond=120000), None, "2026-06-25T10:00:00.12Z"),
    (AT.replace(microsecond=1), None, "2026-06-25T10:00:00.000001Z"),
    (AT, 123456789, "2026-06-25T10:00:00.123456789Z"),
    (AT.astimezone(timezone(timedelta(hours=2))), None, "2026-06-25T12:00:00+02:00"),
    (AT.astimezone(timezone(-timedelta(hours=5, minutes=30))), None, "2026-06-25T04:30:00-05:30"),
])
def test_times_as_time_Time_MarshalJSON_writes_them(at, nanos, go):
    assert go_json.go_time(at, nanos) == go


def test_a_naive_time_is_refused():
    with pytest.raises(SnapshotError, match="timezone"):
        go_json.go_time(datetime(2026, 1, 1))


def test_first_snapshot_layout_struct_order_omitempty_and_sorted_maps():
    snap = Snapshot(kind="bot", name="review-pr", run_id="run-a", at=AT, metrics=Metrics(cost_usd=0.12, tokens=3456),
                    aggregate=Aggregate(
                        verdicts=[JudgeVerdict(model="openai:gpt-4o", family="openai",
                                               scores={"overall": 0.7, "efficacy": 0.8}, narrative="Good.",
                                               confidence=0.9)],
                        mean_scores={"overall": 0.7, "efficacy": 0.8}))
    assert go_json.dumps(snap) == """{
  "schema_version": 1,
  "kind": "bot",
  "name": "review-pr",
  "run_id": "run-a",
  "at": "2026-06-25T10:00:00Z",
  "metrics": {
    "cost_usd": 0.12,
    "tokens": 3456,
    "duration_ms": 0,
    "iterations": 0,
    "model_calls": 0,
    "retries": 0
  },
  "aggregate": {
    "verdicts": [
      {
        "model": "openai:gpt-4o",
        "family": "openai",
        "same_family_as_bot": false,
        "scores": {
          "efficacy": 0.8,
          "overall": 0.7
        },
        "narrative": "Good.",
        "confidence": 0.9
      }
    ],
    "mean_scores": {
      "efficacy": 0.8,
      "overall": 0.7
    }
  }
}
"""


def test_optional_fields_and_the_comparison_when_present():
    snap = Snapshot(kind="feature", name="perm", persona="Revi", run_id="r2", at=AT, bot_version="1.2",
                    iterion_sha="abc", task="t", evidence_digest="d", prev_run_id="r1",
                    aggregate=Aggregate(verdicts=[], mean_scores={}, disagreement={"overall": 0.2}, note="n"),
                    comparison=Delta(prev_run_id="r1", overall_delta=-0.1, value_delta=0.0,
                                     per_dimension={"overall": -0.1}, verdict="worse"))
    text = go_json.dumps(snap)
    keys = [line.split('"')[1] for line in text.splitlines() if line.startswith('  "')]
    assert keys == ["schema_version", "kind", "name", "persona", "run_id", "at", "bot_version", "iterion_sha",
                    "task", "metrics", "aggregate", "evidence_digest", "prev_run_id", "comparison"]
    assert '"verdicts": [],' in text and '"mean_scores": {},' in text  # empty, not nil: kept
    assert text.endswith('''  "comparison": {
    "prev_run_id": "r1",
    "overall_delta": -0.1,
    "value_delta": 0,
    "per_dimension": {
      "overall": -0.1
    },
    "verdict": "worse"
  }
}
''')


def test_nil_verdicts_and_scores_are_null_as_in_go():
    snap = Snapshot(kind="bot", name="n", run_id="r", at=AT,
                    aggregate=Aggregate(verdicts=[JudgeVerdict(model="m")]))
    text = go_json.dumps(snap)
    assert '"scores": null,' in text and '"mean_scores": null' in text and "relative_vs_prev" not in text


def test_load_then_dump_is_the_identity_on_what_we_write():
    snap = Snapshot(kind="bot", name="x", run_id="r", at=AT.replace(microsecond=5), persona="p",
                    aggregate=Aggregate(verdicts=[JudgeVerdict(model="a:b", family="a", same_family_as_bot=True,
                                                               scores={"overall": 1.0}, narrative="n",
                                                               relative_vs_prev={"overall": "better"},
                                                               relative_narrative="rn", confidence=1)],
                                        mean_scores={"overall": 1.0}),
                    comparison=Delta(prev_run_id="q", overall_delta=1e-7, per_dimension={}, verdict="same"))
    text = go_json.dumps(snap)
    assert go_json.dumps(s.loads(text)) == text


def test_nanoseconds_written_by_go_survive_a_load():
    text = go_json.dumps(Snapshot(kind="b", name="n", run_id="r", at=AT, at_nanos=999))
    assert '"at": "2026-06-25T10:00:00.000000999Z"' in text
    assert go_json.dumps(s.loads(text)) == text


@pytest.mark.parametrize("doc, message", [
    ('{"kind": 3}', r"snapshot:1: \$.kind: expected a string, got a number"),
    ('{"metrics": {"tokens": 1.5}}', r"snapshot:1: \$.metrics.tokens: expected an integer, got a number"),
    ('{"aggregate": {"mean_scores": {"overall": "high"}}}',
     r"snapshot:1: \$.aggregate.mean_scores.overall: expected a number, got a string"),
    ('{"aggregate": {"verdicts": [{"same_family_as_bot": 1}]}}',
     r"snapshot:1: \$.aggregate.verdicts\[0\].same_family_as_bot: expected true or false, got a number"),
    ('{"at": "yesterday"}', r"snapshot:1: \$.at: not an RFC 3339 time"),
    # The door (core/reader.py) refuses these before the snapshot's types see them, naming line and path.
    ('{"at": "2026-02-30T00:00:00Z"}', r'snapshot:1: \$.at: "2026-02-30T00:00:00Z" is not a timestamp'),
    ('{"metrics": {"cost_usd": NaN}}', r"snapshot:1: \$\.metrics\.cost_usd: NaN is not a number \(JSON has no NaN or Infinity\)"),
    ('{\n"kind": }', "snapshot:2: column 9: not JSON"),
    ('{"kind": "bot",\n "kind": "feature"}', r'snapshot:2: \$.kind: key "kind" given twice'),
])
def test_loading_names_the_field_go_would_refuse(doc, message):
    with pytest.raises(SnapshotError, match=message):
        s.loads(doc)


def test_missing_fields_load_as_go_zero_values():
    snap = s.loads("{}")
    assert (snap.schema_version, snap.kind, snap.metrics, snap.comparison) == (0, "", Metrics(), None)


@pytest.mark.parametrize("doc, message", [
    ({"cost_usd": "1"}, "metrics.cost_usd: expected a number, got a string"),
    ({"tokens": True}, "metrics.tokens: expected an integer, got a boolean"),
    ({"tokens": 2 ** 63}, "metrics.tokens: 9223372036854775808 does not fit an int64"),
    ({"cost": 1}, "metrics.cost: unknown field"),
    ({"retries": -1}, "metrics.retries: must be 0 or more"),
])
def test_metrics_file_strictness_names_the_field(doc, message):
    with pytest.raises(SnapshotError, match=message):
        s.metrics_from(doc, strict=True)


def test_metrics_file_all_fields():
    m = s.metrics_from({"cost_usd": 1, "tokens": 10, "duration_ms": 20, "iterations": 3, "model_calls": 4,
                        "retries": 0}, strict=True)
    assert m == Metrics(1.0, 10, 20, 3, 4, 0) and isinstance(m.cost_usd, float)
