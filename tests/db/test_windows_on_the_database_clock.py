"""Time follows the database, never the session. Every window (the hot tier, the
purge horizon, the one-day backdating window) is counted in UTC on the statement's clock, whatever
TimeZone a login sets (crafted POSIX zones with offsets and DST jumps of days, and real ones) and
however long it holds a transaction open; every time a caller supplies and the database could
stamp is stamped, or bounded by the database's clock. Each attempt is made as a real login of the
role that succeeded before (docs/guards.md, section 15)."""

from __future__ import annotations

import time
from datetime import timedelta

import psycopg
import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from evalledger.suites.brain_eval import store
from tests.builders import BRAIN_PROMPTS, record_run, register_prompt, run_fields
from tests.db.insider_logins import logins, refused, set_zone, utc_now, zone_that_moves  # noqa: F401 (fixture)
from tests.db.test_retention import age_run, purge_committed

HOT, HORIZON, DAY = "24 months", "7 years", "1 day"


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


def window_in_utc(conn, span: str):
    """span before this statement, on the UTC calendar: what every window must be."""
    return conn.execute("SELECT timezone('UTC', timezone('UTC', statement_timestamp()) - %s::interval)",
                        (span,)).fetchone()[0]


@pytest.mark.parametrize("span, function", [(HOT, "hot_tier_start_v1()"), (HORIZON, "purge_horizon_at_v1()"),
                                            (DAY, "utc_ago_v1(backdating_window_v1())")])
def test_every_window_is_the_same_in_every_time_zone(admin, logins, span, function):
    """A zone that moves `now() - interval` by days (either way) moves none of the ledger's windows."""
    conn = logins("runner") if span != HORIZON else logins("retention")
    tried = 0
    for earlier in (True, False):
        zone, hours = zone_that_moves(conn, span, earlier=earlier)
        if abs(hours) < 20:
            continue  # no zone moves it this way today (month arithmetic moves it one way on some dates)
        tried += 1
        set_zone(conn, zone)
        naive, window, utc = conn.execute(
            f"SELECT now() - %s::interval, evalledger.{function}, "
            "timezone('UTC', timezone('UTC', statement_timestamp()) - %s::interval)", (span, span)).fetchone()
        assert abs((naive - utc).total_seconds()) / 3600 >= 20  # the session's arithmetic is bent ...
        assert window == utc  # ... the ledger's is not
    assert tried, f"no zone moves {span} by a day today: the test proves nothing"
    # Nor does any policy of the ledger compute a window from now() any more.
    assert admin.execute("SELECT count(*) FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid "
                         "WHERE c.relnamespace = 'evalledger'::regnamespace AND (pg_get_expr(p.polqual, p.polrelid) "
                         "~ 'now\\(\\)' OR pg_get_expr(p.polwithcheck, p.polrelid) ~ 'now\\(\\)')").fetchone()[0] == 0


def created_at(admin, run_id):
    return admin.execute("SELECT created_at FROM evalledger.brain_eval_log WHERE eval_run_id = %s", (run_id,)).fetchone()[0]


def test_a_crafted_zone_moves_no_run_across_the_hot_tier(admin, logins, reviewer_id):
    """A run recorded between the UTC boundary and where the crafted zone puts it: read as UTC says
    (hot or cold) by RevOps, the runner and its reviewer in that zone; the auditor reads it anyway."""
    zone, hours = zone_that_moves(logins("revops"), HOT)
    assert abs(hours) >= 20, "no zone moves the hot tier by a day today"
    run_id = record_run(logins("runner"), reviewer_id, count=2, registry=admin, review_conn=admin).eval_run_id
    # Half-way between: cold by UTC where the zone stretches the window back, hot where it pulls it in.
    age_run(admin, run_id, f"timezone('UTC', timezone('UTC', now()) - interval '{HOT}') - interval '{hours / 2} hours'")
    hot_by_utc = hours < 0
    for role in ("revops", "runner", "reviewer", "auditor"):
        conn = logins(role)
        set_zone(conn, zone)
        # In that zone the old window (now() - interval, the session's arithmetic) says the opposite ...
        assert conn.execute("SELECT %s::timestamptz >= now() - interval '24 months'",
                            (created_at(admin, run_id),)).fetchone()[0] is not hot_by_utc
        seen = [conn.execute(f"SELECT count(*) FROM evalledger.{t} WHERE eval_run_id = %s", (run_id,)).fetchone()[0]
                for t in ("brain_eval_log", "brain_eval_question_score")]
        # ... the ledger's is UTC's.
        assert seen == ([1, 2] if role == "auditor" or hot_by_utc else [0, 0]), role


def test_a_crafted_zone_purges_nothing_before_seven_years(admin, logins, reviewer_id):
    """The purge horizon a zone pulls forward (so a run would go days before its 7 years) stays put."""
    retention = logins("retention")
    zone, hours = zone_that_moves(retention, HORIZON, earlier=False)
    assert hours <= -20, "no zone pulls the purge horizon forward by a day today"
    run_id = record_run(logins("runner"), reviewer_id, count=2, registry=admin, review_conn=admin).eval_run_id
    # Inside 7 years by UTC, past the horizon as the crafted zone would count it.
    age_run(admin, run_id, f"timezone('UTC', timezone('UTC', now()) - interval '{HORIZON}') + interval '{-hours / 2} hours'")
    set_zone(retention, zone)
    assert retention.execute("SELECT %s::timestamptz < now() - interval '7 years'",
                             (created_at(admin, run_id),)).fetchone()[0]  # what the old horizon said
    assert retention.execute("SELECT * FROM evalledger.retention_purge_v2()").fetchall() == []
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log WHERE eval_run_id = %s", (run_id,)).fetchone()[0] == 1
    plan = {r[0]: r[1:5] for r in retention.execute("SELECT * FROM evalledger.retention_plan_v2()")}
    assert plan["brain_eval_log"] == (0, 1, 0, 0)  # cold, not due


def test_a_crafted_zone_stretches_no_backdating_window(admin, logins, reviewer_id):
    """A run (or an analysis) that started days ago is refused without an import, in any zone."""
    runner = logins("runner")
    zone, hours = zone_that_moves(runner, DAY, earlier=True)
    assert hours >= 20, "no zone stretches a day back today"
    set_zone(runner, zone)
    started = runner.execute("SELECT timezone('UTC', timezone('UTC', now()) - interval '1 day') - %s * interval '1 hour'",
                             (hours / 2,)).fetchone()[0]
    assert runner.execute("SELECT %s::timestamptz >= now() - interval '1 day'", (started,)).fetchone()[0]
    with refused(admin, errors.CheckViolation, r"evalledger: started_at .* is more than a day before the run is recorded",
                 "brain_eval_log_started_recently"):
        store.start_run(runner, question_count=3, reviewer_user_id=reviewer_id, **run_fields(started_at=started))
    with refused(admin, errors.CheckViolation,
                 r"evalledger: produced_at .* is more than a day before the analysis is recorded",
                 "brain_analysis_log_produced_recently"):
        store.record_analysis(runner, brain="AGT-901", origin="production", model_id="m",
                              system_prompt_hash=BRAIN_PROMPTS["AGT-901"], question="q", output="o",
                              token_cost_usd="0.01", produced_at=started)


def test_a_transaction_held_open_keeps_no_old_window(admin, logins, reviewer_id):
    """The window is the statement's: RevOps that began a transaction while a run was hot stops
    reading it once it ages out, mid-transaction (now(), the transaction's start, would keep it)."""
    run_id = record_run(logins("runner"), reviewer_id, count=1, registry=admin, review_conn=admin).eval_run_id
    age_run(admin, run_id, "timezone('UTC', timezone('UTC', now()) - interval '24 months') + interval '2 seconds'")
    revops = logins("revops", autocommit=False)
    count = "SELECT count(*) FROM evalledger.brain_eval_log WHERE eval_run_id = %s"
    assert revops.execute(count, (run_id,)).fetchone()[0] == 1
    time.sleep(3)
    assert revops.execute("SELECT %s::timestamptz >= now() - interval '24 months'",
                          (created_at(admin, run_id),)).fetchone()[0]  # the transaction's clock would still show it
    assert revops.execute(count, (run_id,)).fetchone()[0] == 0
    revops.rollback()


def test_a_transaction_held_open_to_age_its_rows_early_is_named_by_every_seal_meanwhile(admin, logins):
    """What PostgreSQL cannot refuse: a row's tier clock is its transaction's start (no trigger runs
    at commit that a session cannot move: a deferred one is made IMMEDIATE by SET CONSTRAINTS), so a
    runner that records an analysis and holds its transaction open commits a row that ages early by
    as long as it held it. It is not unseen: every seal meanwhile seals nothing past it and names
    its transaction (held_by), and the row is sealed only once it commits."""
    runner = logins("runner", autocommit=False)
    store.record_analysis(runner, brain="AGT-901", origin="production", model_id="claude-sonnet-4-6",
                          system_prompt_hash=BRAIN_PROMPTS["AGT-901"], question_id=None, question="held",
                          output="o", token_cost_usd="0.01")
    began, xid = runner.execute("SELECT now(), txid_current()").fetchone()
    time.sleep(1.5)
    held_by = admin.execute("SELECT held_by FROM evalledger.ledger_seal_v1(0.2)").fetchone()[0]
    assert held_by is not None and held_by <= xid  # it, or an older one of the server's still open
    runner.commit()
    clock = admin.execute("SELECT created_at FROM evalledger.brain_analysis_log WHERE question = 'held'").fetchone()[0]
    committed_by = admin.execute("SELECT statement_timestamp()").fetchone()[0]
    assert clock == began and committed_by - clock >= timedelta(seconds=1.5)  # early by the time held
    assert admin.execute("SELECT held_by, entry_count FROM evalledger.ledger_seal_v1(5)").fetchone() == (None, 1)


# -- times a caller supplies ------------------------------------------------------------------------------

@pytest.mark.parametrize("produced_at, constraint", [
    ("2099-01-01 00:00:00+00", "brain_analysis_log_produced_not_in_future"),
    ("2020-01-01 00:00:00+00", "brain_analysis_log_produced_recently"),
])
def test_an_analysis_dated_by_its_caller_is_bounded(admin, logins, produced_at, constraint):
    """2099 would stay "latest" in prompt_drift_v1 for ever; 2020 would answer a run recorded today."""
    runner = logins("runner")
    for origin in ("production", "eval"):
        with refused(admin, errors.CheckViolation, r"evalledger: produced_at .* (is in the future|is more than a day "
                     r"before the analysis is recorded)", constraint):
            store.record_analysis(runner, brain="AGT-901", origin=origin, model_id="claude-sonnet-4-6",
                                  system_prompt_hash=BRAIN_PROMPTS["AGT-901"], question_id="EVAL-Q01", question="q",
                                  output="o", token_cost_usd="0.01", produced_at=produced_at)


def test_an_analysis_from_before_the_run_answers_none_of_it(admin, logins, reviewer_id):
    """An import may bring an old analysis in (a backfill, in the import's transaction), but not to
    answer a run that started after it was produced."""
    runner = logins("runner")
    with admin.transaction():
        store.record_import(admin, "an old analysis, brought in")
        analysis = store.record_analysis(admin, brain="AGT-901", model_id="claude-sonnet-4-6",
                                         system_prompt_hash=BRAIN_PROMPTS["AGT-901"], question_id="EVAL-Q06",
                                         question="q", output="o", token_cost_usd="0.01",
                                         produced_at=utc_now() - timedelta(days=30))
    run_id = store.start_run(runner, question_count=1, reviewer_user_id=reviewer_id, **run_fields())
    with refused(admin, errors.CheckViolation, rf"evalledger: analysis {analysis} was produced at .*, before run "
                 rf"{run_id} started at .*", "brain_eval_question_score_analysis_during_the_run"):
        store.add_question_score(runner, eval_run_id=run_id, brain_analysis_id=analysis, question_id="EVAL-Q06",
                                 question_type="plan_diagnosis", uses_stale_fixture=False)


def test_a_takes_quality_run_starts_when_the_database_says(admin, logins):
    """started_at (the receipt's ts, the trend's order) is not the runner's: no grant, and the
    superuser's is refused as a computed value."""
    runner = logins("runner")
    values = {"corpus_source": "db", "sample_limit": 10, "seed": 1, "n_takes": 3, "corpus_sha8": "aaaaaaaa",
              "prompt_sha8": "bbbbbbbb", "models": ["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"],
              "started_at": "2015-01-01 00:00:00+00"}
    insert = (f"INSERT INTO evalledger.eval_takes_quality_runs ({', '.join(values)}) "
              f"VALUES ({', '.join(f'%({k})s' for k in values)})")
    with refused(admin, errors.InsufficientPrivilege, "permission denied for table eval_takes_quality_runs"):
        runner.execute(insert, values)
    with refused(admin, errors.InsufficientPrivilege,
                 r"evalledger: eval_takes_quality_runs\.started_at computed by the database: leave it out"):
        admin.execute(insert, values)
    values.pop("started_at")
    started = runner.execute(insert.replace(", started_at)", ")").replace(", %(started_at)s)", ")") + " RETURNING started_at",
                             values).fetchone()[0]
    assert abs((started - utc_now()).total_seconds()) < 300


def test_no_application_role_supplies_a_captured_rows_clock_or_id(admin, logins):
    """created_at bounds every chained export; id orders it: no role holds INSERT on either."""
    for role in ("runner", "owner", "revops", "auditor", "reviewer", "agent"):
        conn = logins(role)
        for column, value in (("created_at", "'2001-01-01'"), ("id", "1")):
            overriding = " OVERRIDING SYSTEM VALUE" if column == "id" else ""
            sqlstate, message = None, None
            try:
                conn.execute(f"INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, "
                             f"expansion_applied, latency_ms, remote, capture_key, {column}){overriding} "
                             f"VALUES ('query', 'q', true, false, 1, false, gen_random_uuid(), {value})")
            except psycopg.Error as exc:
                sqlstate, message = exc.sqlstate, exc.diag.message_primary
            assert sqlstate == "42501", (role, column)
            assert message in ("permission denied for table eval_candidates", "permission denied for schema evalledger")
    assert admin.execute("SELECT count(*) FROM evalledger.eval_candidates").fetchone()[0] == 0


def work_quality_import(name: str, run_id: str, at: str, overall: float = 0.5) -> dict:
    dims = ["efficacy", "completeness", "output_quality", "restraint", "reliability", "value_for_money", "overall"]
    return {"schema_version": 1, "kind": "bot", "name": name, "run_id": run_id, "at": at,
            "metrics": {"cost_usd": 0.01, "tokens": 10},
            "aggregate": {"mean_scores": {d: overall for d in dims}, "note": ""}}


def test_a_work_quality_import_from_the_future_is_refused_and_no_file_becomes_the_baseline(admin, logins):
    runner = logins("runner")
    insert = ("INSERT INTO evalledger.eval_work_quality_snapshots (origin, kind, name, run_id, models, snapshot_json, "
              "source_file) VALUES ('import', 'bot', 'x', 'x', '{}', %s, 'f.json')")
    with refused(admin, errors.CheckViolation, r"evalledger: snapshot r2099 of bot-a is dated 2099-01-01T00:00:00Z "
                 r"\(in the future\)", "eval_work_quality_snapshots_at_not_in_future"):
        runner.execute(insert, (Jsonb(work_quality_import("bot-a", "r2099", "2099-01-01T00:00:00Z")),))
    # A run's baseline is the latest snapshot completed at or before it, whatever order files came in.
    runner.execute(insert, (Jsonb(work_quality_import("bot-a", "old", (utc_now() - timedelta(days=9)).isoformat())),))
    first = runner.execute("INSERT INTO evalledger.eval_work_quality_snapshots (origin, kind, name, run_id, models) "
                           "VALUES ('run', 'bot', 'bot-a', 'run-1', '{openai:gpt-4o}') RETURNING prev_run_id").fetchone()
    assert first == ("old",)
