"""replay's runner side without a database: what an adapter's reply becomes (answered, declined or
an adapter failure naming why), the three adapters' transport, and an export file read whole with
its first bad line named."""

from __future__ import annotations

import json
import sys

import pytest

from evalledger.core.errors import EvalledgerError
from evalledger.suites.replay import adapters, captured
from evalledger.suites.replay.example_brain import answer

REQUEST = {"id": 7, "tool_name": "query", "query": "renewals at risk for acme", "detail": None,
           "expand_enabled": True, "vector_enabled": False}


def test_an_answer_keeps_exactly_the_seed_result_fields():
    reply = adapters.reply_of({**answer(REQUEST), "extra": 1})
    assert reply.outcome == "answered" and reply.error is None
    assert set(reply.fields) == {"retrieved_slugs", "retrieved_chunk_ids", "source_ids", "vector_enabled",
                                 "expansion_applied", "detail_resolved", "latency_ms"}
    assert reply.fields["vector_enabled"] is False  # the example brain answers in the mode asked


@pytest.mark.parametrize("data, says", [
    ([], "the reply is not a JSON object"),
    ({}, "the reply lacks retrieved_slugs"),
    ({**answer(REQUEST), "retrieved_chunk_ids": [1, "2"]}, "retrieved_chunk_ids is not an array of whole numbers"),
    ({**answer(REQUEST), "latency_ms": float("nan")}, "latency_ms is not a finite number"),
    ({**answer(REQUEST), "latency_ms": -1}, "latency_ms is not a finite number of at least 0"),
    ({**answer(REQUEST), "vector_enabled": "false"}, "vector_enabled is not true or false"),
    ({**answer(REQUEST), "detail_resolved": "max"}, "detail_resolved is not"),
])
def test_a_reply_that_is_not_the_contract_is_an_adapter_failure_naming_why(data, says):
    reply = adapters.reply_of(data)
    assert reply.outcome == "adapter_failed" and says in reply.error, reply.error


def test_a_brain_that_cannot_answer_in_the_mode_declines():
    reply = adapters.reply_of({"replayable": False, "reason": "no keyword index"})
    assert (reply.outcome, reply.error) == ("declined", "no keyword index")


def test_a_command_is_run_once_per_query_with_the_request_on_stdin(tmp_path):
    script = tmp_path / "brain.py"
    script.write_text("import json, sys\nrequest = json.load(sys.stdin)\n"
                      "if request['id'] == 1:\n    print('warming up', file=sys.stderr)\n"
                      "    print('no index for', request['query'], file=sys.stderr)\n    sys.exit(5)\n"
                      "print(json.dumps({'retrieved_slugs': [request['query']], 'retrieved_chunk_ids': [],"
                      " 'source_ids': [], 'vector_enabled': request['vector_enabled'], 'expansion_applied': False,"
                      " 'detail_resolved': None, 'latency_ms': 3}))\n")
    command = adapters.CommandAdapter(f"{sys.executable} {script}", timeout_s=30)
    assert command.ask(REQUEST).fields["retrieved_slugs"] == [REQUEST["query"]]
    failed = command.ask({**REQUEST, "id": 1})
    assert (failed.outcome, failed.error) == ("adapter_failed", f"exit 5: no index for {REQUEST['query']}")
    missing = adapters.CommandAdapter("/nonexistent/brain", timeout_s=30).ask(REQUEST)
    assert missing.outcome == "adapter_failed" and missing.error.startswith("cannot run /nonexistent/brain")


def test_a_python_adapter_s_exception_is_its_query_s_failure():
    python = adapters.PythonAdapter("evalledger.suites.replay.example_brain:answer")
    assert python.ask(REQUEST).outcome == "answered"
    assert python.ask({**REQUEST, "query": None}).outcome == "answered"  # an empty search, not an error
    with pytest.raises(EvalledgerError, match="has no function nope"):
        adapters.PythonAdapter("evalledger.suites.replay.example_brain:nope")


def test_one_adapter_is_named():
    with pytest.raises(EvalledgerError, match="one of --command, --url or --python"):
        adapters.adapter(None, None, None, 30)
    with pytest.raises(EvalledgerError, match="an http:// or https:// URL"):
        adapters.adapter(None, "ftp://brain", None, 30)


def test_an_export_file_is_read_whole_and_its_first_bad_line_named(tmp_path):
    row = {"schema_version": 1, "id": 4, "tool_name": "search", "query": "q", "retrieved_slugs": ["a"],
           "retrieved_chunk_ids": [1, 1], "source_ids": ["s"], "expand_enabled": None, "detail": None,
           "detail_resolved": None, "vector_enabled": False, "expansion_applied": False, "latency_ms": 12.5,
           "remote": True, "job_id": None, "subagent_id": None, "created_at": "2026-03-01T09:30:00.000000Z",
           "a_field_of_v1_2": "ignored"}
    path = tmp_path / "week.ndjson"
    path.write_text(json.dumps(row) + "\n\n" + json.dumps({**row, "id": 5}) + "\n")
    export = captured.read_export(path)
    assert [r.id for r in export.rows] == [4, 5] and len(export.sha256) == 64
    assert export.rows[0].request() == {"id": 4, "tool_name": "search", "query": "q", "detail": None,
                                        "expand_enabled": None, "vector_enabled": False}
    assert export.rows[0].results["captured_chunk_ids"] == [1, 1]
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "id": 6, "latency_ms": "fast"}) + "\n")
    with pytest.raises(EvalledgerError, match=rf"^{path}:2: \$\.latency_ms: \"fast\" is not a finite number"):
        captured.read_export(path)


@pytest.mark.parametrize("spelled, says", [
    ('"latency_ms": 12.5, "latency_ms": 3', '$.latency_ms: key "latency_ms" given twice in one object'),
    ('"latency_ms": 1e-400', "$.latency_ms: 1e-400 is nearer to zero than a float holds (it would be read as 0)"),
    ('"latency_ms": 1e400', "$.latency_ms: a number past the range of a float"),
    ('"latency_ms": NaN', "$.latency_ms: NaN is not a number (JSON has no NaN or Infinity)"),
    ('"latency_ms": 12.5, "created_at": "2026-02-30T09:30:00Z"',
     '$.created_at: "2026-02-30T09:30:00Z" is not a timestamp (ISO 8601)'),
])
def test_an_export_file_passes_the_door_every_file_passes(tmp_path, spelled, says):
    """replay --from reads its file through the door: what the door refuses in any file (a key
    twice, which json would read as its last value; a number a float reads as 0 or as infinity) is
    refused here, naming the file, the line and the field, not read as another row."""
    row = {"schema_version": 1, "id": 4, "tool_name": "search", "query": "q", "retrieved_slugs": ["a"],
           "retrieved_chunk_ids": [1], "source_ids": ["s"], "expand_enabled": None, "detail": None,
           "vector_enabled": False, "latency_ms": "HERE"}
    path = tmp_path / "week.ndjson"
    path.write_text(json.dumps({**row, "latency_ms": 1}) + "\n" + json.dumps(row).replace('"latency_ms": "HERE"', spelled)
                    + "\n")
    with pytest.raises(EvalledgerError) as refused:
        captured.read_export(path)
    assert str(refused.value) == f"{path}:2: {says}"
