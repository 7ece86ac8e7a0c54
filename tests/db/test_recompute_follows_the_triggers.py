"""`ledger verify --recompute` re-derives every stored decision by the very functions that decided
it: the versions the installed triggers call, never the ones they were repointed from. Once the
recompute still named brain_eval_decide_v1 and question_passes_v1 after the triggers had moved to
their v2s (issue 17, since folded into the baseline), so an untampered run of a prompt registered under another brain read as
rewritten, and a rewrite to what the old rule said would have read as untampered."""

import re

from evalledger.core.paths import database_root
from tests.db.test_nothing_unused import OBJECTS, bodies_of, reached_from

# The tables whose rows carry a decision, and the helpers that decide (their versions compared).
DECIDED_TABLES = ("brain_eval_log", "brain_eval_question_score", "eval_takes_quality_runs",
                  "eval_work_quality_snapshots", "replay_run", "replay_query", "eval_gate_decision")
DECIDING = re.compile(r"^(brain_eval_decide|brain_eval_question_verdict|question_passes|question_needs|"
                      r"takes_quality_receipt|takes_quality_cycle|work_quality_compare|work_quality_document|"
                      r"replay_decision|replay_query_measured|replay_recall|replay_jaccard|replay_rbo|gate_decide)_v\d+$")
TRIGGERS = """
    SELECT p.proname::text FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
     WHERE t.tgrelid = ANY (%s::regclass[]) AND NOT t.tgisinternal AND t.tgenabled <> 'D'"""


def recompute_entry_point() -> str:
    """The function the `recompute` named query reads (sql/ledger/queries.sql)."""
    text = (database_root() / "sql" / "ledger" / "queries.sql").read_text()
    query = text.split("-- name: recompute\n", 1)[1].split("-- name:", 1)[0]
    return re.search(r"evalledger\.(ledger_recompute_v\d+)\(", query).group(1)


def test_the_recompute_calls_the_deciding_versions_the_triggers_call(admin):
    bodies = bodies_of(admin.execute(OBJECTS).fetchall())
    triggers = {name for (name,) in admin.execute(TRIGGERS, ([f"evalledger.{t}" for t in DECIDED_TABLES],))}
    decided_by = {n for n in reached_from(bodies, triggers) if DECIDING.match(n)}
    entry = recompute_entry_point()
    assert entry in bodies, f"the recompute query reads {entry}, which is not installed"
    recomputed_by = {n for n in reached_from(bodies, {entry}) if DECIDING.match(n)}
    assert decided_by, "no deciding helper found behind the triggers: the pattern no longer names them"
    assert recomputed_by == decided_by
