"""Issue 37, item 3: the database's clock for every time a role does not own. Every timestamptz
column of the ledger that an application role may write is either stamped by the database or
bounded; each attempt of the issue as the login that got through (docs/guards.md, section 29)."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg import errors

from evalledger.ops import doctor
from tests.builders import load_catalog, register_prompt, run_fields
from tests.db.insider_logins import LOGINS, logins, refused, set_zone, zone_that_moves  # noqa: F401 (fixture)
from tests.unguarded import clocks_unguarded

ROLES = sorted({group for _, group in LOGINS.values()} | {"evalledger_reviewer"})

# Every timestamptz column an application role may write, and the BEFORE INSERT trigger that
# stamps it with the database's clock whatever the role wrote.
STAMPED = {
    ("brain_analysis_log", "created_at"): "brain_analysis_log_20_tier_clock",
    ("brain_eval_catalog", "loaded_at"): "brain_eval_catalog_10_admit",
    ("brain_eval_import", "created_at"): "brain_eval_import_10_admit",
    ("brain_eval_log", "created_at"): "brain_eval_log_10_admit",
    ("brain_eval_question_score", "created_at"): "brain_eval_question_score_10_write",
    ("brain_eval_question_score", "run_created_at"): "brain_eval_question_score_10_write",
    ("brain_eval_run_review", "created_at"): "brain_eval_run_review_10_admit",
    ("brain_eval_run_review", "run_created_at"): "brain_eval_run_review_10_admit",
    ("brain_version", "created_at"): "brain_version_10_admit",
    ("legal_hold", "placed_at"): "legal_hold_20_tier_clock",
    ("legal_hold_release", "released_at"): "legal_hold_release_10_admit",
    ("prompt_tuner", "registered_at"): "prompt_tuner_10_admit",
    ("reviewer", "created_at"): "reviewer_20_clock",
    ("rubric", "created_at"): "rubric_10_fingerprint",
    ("target", "created_at"): "target_20_clock",
}
# ... or the constraints (raised by its admission trigger) that bound the time the role gives:
# the caller's own times, each refused in the future and where the project's readers cannot read it.
BOUNDED = {
    ("brain_analysis_log", "produced_at"): ("brain_analysis_log_produced_not_in_future",
                                            "brain_analysis_log_produced_recently",
                                            "brain_analysis_log_produced_readable"),
    ("brain_eval_log", "started_at"): ("brain_eval_log_started_not_in_future", "brain_eval_log_started_recently",
                                       "brain_eval_log_started_readable"),
    # Inserted NULL only (require_open_v1); set at completion by the database's clock (complete_once_v1).
    ("brain_eval_log", "completed_at"): ("require_open_v1", "complete_once_v1"),
    ("eval_capture_failures", "occurred_at"): ("eval_capture_failures_occurred_not_in_future",
                                               "eval_capture_failures_occurred_in_the_hot_tier"),
    ("legal_hold", "held_from"): ("legal_hold_range_ordered", "legal_hold_range_readable"),
    ("legal_hold", "held_to"): ("legal_hold_range_ordered", "legal_hold_range_readable"),
    # Inserted NULL only: a hold is released by a legal_hold_release row.
    ("legal_hold", "released_at"): ("legal_hold_released_by_a_release_row",),
    # A replay window's bounds: readable, ordered, and its end not after the database's clock; a
    # replayed row's capture time is the captured row's (a ledger window's) or the file's, readable.
    ("replay_run", "since_at"): ("replay_run_window_readable", "replay_run_source_whole"),
    ("replay_run", "until_at"): ("replay_run_window_readable", "replay_run_until_not_in_future"),
    ("replay_query", "capture_created_at"): ("replay_query_capture_time_readable",),
}

WRITABLE_TIMES = """
SELECT c.relname, a.attname, r.role
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 CROSS JOIN unnest(%s::text[]) AS r(role)
 WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
   AND a.atttypid = 'timestamptz'::regtype AND a.attnum > 0 AND NOT a.attisdropped
   AND (has_column_privilege(r.role, c.oid, a.attname, 'INSERT') OR has_column_privilege(r.role, c.oid, a.attname, 'UPDATE'))
 ORDER BY 1, 2, 3"""


def test_every_time_a_role_may_write_is_stamped_or_bounded(admin):
    """The catalog: every timestamptz column (with a default or not) that any application role may
    INSERT or UPDATE is stamped by a named BEFORE INSERT trigger, ENABLE ALWAYS, whose function sets
    it, or bounded by named constraints. A new such column fails here until it is one or the other."""
    writable = {(t, c) for t, c, _ in admin.execute(WRITABLE_TIMES, (ROLES,))}
    assert writable == set(STAMPED) | set(BOUNDED)
    for (table, column), trigger in STAMPED.items():
        found = admin.execute(
            "SELECT t.tgenabled, p.prosrc, (t.tgtype::int & 2) <> 0 AND (t.tgtype::int & 4) <> 0 AND (t.tgtype::int & 1) <> 0 "
            "FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid "
            "WHERE t.tgrelid = ('evalledger.' || %s)::regclass AND t.tgname = %s", (table, trigger)).fetchone()
        assert found is not None, (table, trigger)
        enabled, source, before_insert_row = found
        assert enabled == "A" and before_insert_row, (table, trigger)
        assert f"NEW.{column} :=" in source, (table, column, trigger)
    sources = "\n".join(r[0] for r in admin.execute(
        "SELECT p.prosrc FROM pg_proc p WHERE p.pronamespace = 'evalledger'::regnamespace"))
    constraints = {r[0] for r in admin.execute(
        "SELECT conname FROM pg_constraint WHERE connamespace = 'evalledger'::regnamespace")}
    for (table, column), names in BOUNDED.items():
        for name in names:
            assert name in constraints or f"'{name}'" in sources or f"evalledger.{name}(" in sources \
                or admin.execute("SELECT to_regproc('evalledger.' || %s)", (name,)).fetchone()[0], (table, column, name)


@pytest.mark.parametrize("table, insert", [
    ("reviewer", "INSERT INTO evalledger.reviewer (reviewer_user_id, role_name, display_name, created_at) "
                 "VALUES (%(id)s, %(name)s, 'R', {time})"),
    ("target", "INSERT INTO evalledger.target (target_id, kind, display_name, created_at) "
               "VALUES (%(name)s, 'bot', 'T', {time})"),
])
def test_the_owner_records_no_registry_row_at_a_time_of_its_own(admin, logins, table, insert):
    """The owner's login set reviewer.created_at and target.created_at to 2001 or 2099: the row is
    recorded at the database's clock, whatever the time given and the session's TimeZone."""
    owner = logins("owner")
    zone, _ = zone_that_moves(owner, "1 day")
    set_zone(owner, zone)
    for n, time in enumerate(("'2001-01-01'", "'2099-01-01'", "'-infinity'", "'infinity'", "now() - interval '3 days'")):
        name = f"t37-{table[:3]}-{n}"
        before = admin.execute("SELECT now()").fetchone()[0]
        owner.execute(insert.format(time=time), {"id": uuid.uuid4(), "name": name})
        key = "role_name" if table == "reviewer" else "target_id"
        stored = admin.execute(f"SELECT created_at FROM evalledger.{table} WHERE {key} = %s", (name,)).fetchone()[0]
        assert before <= stored <= admin.execute("SELECT now()").fetchone()[0], (time, stored)
    # Every other role may not insert at all.
    for role in ("runner", "revops", "auditor", "agent", "retention", "reviewer"):
        with pytest.raises(errors.InsufficientPrivilege):
            logins(role).execute(insert.format(time="'2001-01-01'"), {"id": uuid.uuid4(), "name": "t37-x"})


FAILURE = ("INSERT INTO evalledger.eval_capture_failures (failure_key, reason, occurred_at) "
           "VALUES (gen_random_uuid(), 'other', {time})")


@pytest.mark.parametrize("time, constraint", [
    ("'2099-01-01'", "eval_capture_failures_occurred_not_in_future"),
    ("'infinity'", "eval_capture_failures_occurred_not_in_future"),
    ("clock_timestamp() + interval '1 minute'", "eval_capture_failures_occurred_not_in_future"),
    ("'2001-01-01'", "eval_capture_failures_occurred_in_the_hot_tier"),
    ("'-infinity'", "eval_capture_failures_occurred_in_the_hot_tier"),
    ("now() - interval '25 months'", "eval_capture_failures_occurred_in_the_hot_tier"),
])
def test_the_runner_dates_no_capture_failure_outside_what_it_can_read(admin, logins, time, constraint):
    """The runner set occurred_at to 2001, 2099 or 'infinity' (psycopg then could not read the row,
    and doctor counted it as recent for ever). Refused as the runner's login, in a crafted TimeZone."""
    runner = logins("runner")
    zone, _ = zone_that_moves(runner, "24 months")
    set_zone(runner, zone)
    with refused(admin, errors.CheckViolation, r"evalledger: occurred_at .* is (in the future|before the hot tier)",
                 constraint):
        runner.execute(FAILURE.format(time=time))
    # A failure spooled a day ago while the database was down is the runner's to date (24 hours:
    # a day in a crafted zone is what its transitions make it).
    runner.execute(FAILURE.format(time="now() - interval '24 hours'"))
    assert runner.execute("SELECT occurred_at FROM evalledger.eval_capture_failures").fetchone()[0] is not None


def test_doctor_counts_no_failure_dated_after_now_as_recent(admin, logins):
    """Rows stored before the bound (here by the superuser, past the trigger) may say 2099 or
    'infinity': doctor's last 24 hours counts neither, and counts a failure of an hour ago."""
    runner = logins("runner")
    runner.execute(FAILURE.format(time="now() - interval '1 hour'"))
    with admin.transaction(), clocks_unguarded(admin, ["eval_capture_failures"]):
        for time in ("'2099-01-01'", "'infinity'"):
            admin.execute(FAILURE.format(time=time))
    assert runner.execute(doctor.QUERIES["doctor_capture_failures"]).fetchall() == [("other", 1)]


@pytest.mark.parametrize("held_from, held_to", [
    ("'2001-01-01'", "'infinity'"), ("'-infinity'", "'2001-01-01'"), ("'2001-01-01'", "'10000-01-01'")])
def test_a_hold_whose_range_cannot_be_read_back_is_refused(admin, logins, held_from, held_to):
    """A range hold to 'infinity' (or year 10000) was stored, and no reader of the holds could read
    it back: refused as the owner's login."""
    owner = logins("owner")
    with refused(admin, errors.CheckViolation, r"evalledger: a hold's range is held_from .* to held_to .*: "
                 r"each a time between the years 1 and 9999", "legal_hold_range_readable"):
        owner.execute("INSERT INTO evalledger.legal_hold (reason, held_from, held_to) "
                      f"VALUES ('audit', {held_from}, {held_to})")
    owner.execute("INSERT INTO evalledger.legal_hold (reason, held_from, held_to) VALUES ('audit', '2001-01-01', '2099-01-01')")
    with psycopg.connect(admin.info.dsn, autocommit=True) as reader:
        assert reader.execute("SELECT held_from, held_to FROM evalledger.legal_hold").fetchall()


@pytest.mark.parametrize("time", ["-infinity", "0001-01-01 00:00:00+00", "0100-01-01 00:00:00+00 BC"])
def test_an_import_dates_nothing_where_no_reader_can_read_it(admin, logins, reviewer_id, time):
    """An import lets a run start, and an analysis be produced, years back: a run started at
    '-infinity' was admitted, and psycopg then could not read the row ("timestamp too small").
    Refused for a run and an analysis. The import is the owner's and the run the runner's, so this
    is one session acting as both, as `brain-eval record --historical` does for an operator who
    holds both roles."""
    load_catalog(admin)
    fields = run_fields("AGT-901")
    register_prompt(admin, "AGT-901", fields["system_prompt_hash"])
    for table, insert, constraint in (
            ("run", "INSERT INTO evalledger.brain_eval_log (run_trigger, brain_under_test, model_id, system_prompt_hash, "
                    "brain_view_contracts_hash, question_catalog_version, question_count, started_at, reviewer_user_id, "
                    "import_id) VALUES (%(run_trigger)s, %(brain_under_test)s, %(model_id)s, %(system_prompt_hash)s, "
                    "%(brain_view_contracts_hash)s, %(question_catalog_version)s, 3, %(time)s, %(reviewer)s, %(import)s)",
             "brain_eval_log_started_readable"),
            ("analysis", "INSERT INTO evalledger.brain_analysis_log (brain, origin, model_id, system_prompt_hash, question, "
                         "output, token_cost_usd, produced_at) VALUES (%(brain_under_test)s, 'production', "
                         "%(model_id)s, %(system_prompt_hash)s, 'q', 'o', 0, %(time)s)",
             "brain_analysis_log_produced_readable")):
        column = "started_at" if table == "run" else "produced_at"
        with refused(admin, errors.CheckViolation, f"evalledger: {column} .* is not a time between the years 1 and 9999",
                     constraint):
            with admin.transaction():
                admin.execute("SET LOCAL ROLE evalledger_owner")
                imported = admin.execute("INSERT INTO evalledger.brain_eval_import (reason) VALUES ('history') "
                                         "RETURNING import_id").fetchone()[0]
                admin.execute("SET LOCAL ROLE evalledger_runner")
                admin.execute(insert, {**fields, "time": time, "reviewer": reviewer_id, "import": imported})
