"""Issue 37, item 2: no abandoned run without a trace. One run of a brain, prompt and catalog is open
at a time (brain_eval_log_one_open_idx, and brain_eval_log_15_one_open naming the open run); an open
run past its rubric's deadline (open_run_days, 14 by default, from its created_at) is decided fail,
"Abandoned: ...", by the next run of its brain or any completion, and reads so before that
(brain_eval_run_state_v1); the runner cancels a run with a reason (brain_eval_cancel_v1). How a run
was closed is stored (brain_eval_run_closure), so the recompute re-derives it. Tried as the real
logins (docs/guards.md, "No abandoned run without a trace")."""

from __future__ import annotations

import pytest
from psycopg import errors

from tests.builders import BRAIN_PROMPTS, STANDARD_CATALOG, load_catalog, record_run, register_prompt, run_fields
from tests.db.insider_logins import (LOGINS, crafted_zones, in_thread, logins, refused,  # noqa: F401 (fixture)
                                     set_zone, wait_until_waiting)
from tests.unguarded import clocks_unguarded
from evalledger.suites.brain_eval import store as brain_eval

ONE_OPEN = (r"evalledger: run {run} of AGT-901, this prompt and catalog test-v1, is open "
            r"\(recorded \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC\): complete or cancel it first")


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)
    load_catalog(admin)


def start(conn, reviewer_id, **overrides):
    """An open run of the standard catalog (no question rows yet), as `brain-eval run` starts one."""
    return brain_eval.start_run(conn, question_count=2, reviewer_user_id=reviewer_id,
                                **run_fields(question_catalog_version=STANDARD_CATALOG, **overrides))


def recorded_ago(admin, run_id, interval: str) -> None:
    """The run recorded `interval` before now, counted in UTC (the superuser, past the guards)."""
    with admin.transaction(), clocks_unguarded(admin, ["brain_eval_log"]):
        admin.execute("UPDATE evalledger.brain_eval_log SET created_at = now() - %s::interval, "
                      "started_at = now() - %s::interval WHERE eval_run_id = %s", (interval, interval, run_id))


def stored(admin, run_id):
    return admin.execute("SELECT completed_at IS NOT NULL, decision::text, decision_rationale, hard_criteria_passed "
                         "FROM evalledger.brain_eval_log WHERE eval_run_id = %s", (run_id,)).fetchone()


def closure(admin, run_id):
    return admin.execute("SELECT closure, reason, closed_by FROM evalledger.brain_eval_run_closure "
                         "WHERE eval_run_id = %s", (run_id,)).fetchone()


def state(conn, run_id):
    return conn.execute("SELECT state, decision::text, decision_rationale FROM evalledger.brain_eval_run_state_v1 "
                        "WHERE eval_run_id = %s", (run_id,)).fetchone()


# -- one open run per brain, prompt and catalog ---------------------------------------------------------
def test_a_second_open_run_of_a_brain_prompt_and_catalog_is_refused_naming_the_first(admin, logins, reviewer_id):
    """The attempt: start, look, start again while the first is open (admitted on b6420f8)."""
    runner = logins("runner")
    first = start(runner, reviewer_id)
    with refused(admin, errors.UniqueViolation, ONE_OPEN.format(run=first), "brain_eval_log_one_open_idx"):
        start(runner, reviewer_id)
    # Another catalog, or another brain, is another run.
    start(runner, reviewer_id, brain_under_test="AGT-902", system_prompt_hash=BRAIN_PROMPTS["AGT-902"])


def test_a_cancelled_run_frees_its_place_and_reads_abandoned(admin, logins, reviewer_id):
    runner = logins("runner")
    first = start(runner, reviewer_id)
    assert runner.execute("SELECT evalledger.brain_eval_cancel_v1(%s, 'wrong catalog loaded')", (first,)).fetchone()[0]
    done, decision, rationale, hard = stored(admin, first)
    assert (done, decision, hard) == (True, "fail", False)
    assert rationale == f"Abandoned: cancelled by {LOGINS['runner'][0]}: wrong catalog loaded"
    assert closure(admin, first) == ("cancelled", "wrong catalog loaded", LOGINS["runner"][0])
    for role in ("runner", "revops", "auditor", "reviewer"):
        assert state(logins(role), first) == ("cancelled", "fail", rationale), role
    # Its place is free; a second cancel of the same run does nothing.
    start(runner, reviewer_id)
    assert not runner.execute("SELECT evalledger.brain_eval_cancel_v1(%s, 'again')", (first,)).fetchone()[0]


def test_a_cancellation_names_the_login_that_acted_through_set_role(admin, logins, reviewer_id):
    """Every command of the CLI acts through SET ROLE: a cancellation made so named the role
    ("cancelled by evalledger_runner"), and who cancelled was lost. It names the login."""
    runner = logins("runner")
    runner.execute("SET ROLE evalledger_runner")
    first = start(runner, reviewer_id)
    assert runner.execute("SELECT evalledger.brain_eval_cancel_v1(%s, 'wrong catalog loaded')", (first,)).fetchone()[0]
    assert closure(admin, first) == ("cancelled", "wrong catalog loaded", LOGINS["runner"][0])
    assert stored(admin, first)[2] == f"Abandoned: cancelled by {LOGINS['runner'][0]}: wrong catalog loaded"


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_a_cancellation_needs_a_reason(admin, logins, reviewer_id, reason):
    runner = logins("runner")
    run = start(runner, reviewer_id)
    with refused(admin, errors.CheckViolation, "evalledger: a cancellation needs a reason",
                 "brain_eval_run_closure_reason_given"):
        runner.execute("SELECT evalledger.brain_eval_cancel_v1(%s, %s)", (run, reason))


@pytest.mark.parametrize("role", ["owner", "reviewer", "revops", "auditor", "agent"])
def test_only_the_runner_cancels_and_no_role_writes_a_closure(admin, logins, reviewer_id, role):
    run = start(logins("runner"), reviewer_id)
    conn = logins(role)
    with refused(admin, errors.InsufficientPrivilege, r"permission denied for (function brain_eval_cancel_v1|schema evalledger)"):
        conn.execute("SELECT evalledger.brain_eval_cancel_v1(%s, 'x')", (run,))
    for statement in ("INSERT INTO evalledger.brain_eval_run_closure (eval_run_id, closure, reason, closed_by, "
                      "reviewer_user_id, run_created_at) VALUES (%s, 'cancelled', 'x', 'x', gen_random_uuid(), now())",
                      "SELECT evalledger.brain_eval_close_v1(%s, 'x')"):
        with refused(admin, errors.InsufficientPrivilege, r"permission denied for ((table|function) brain_eval_\w+|schema evalledger)"):
            conn.execute(statement, (run,))
    assert stored(admin, run)[0] is False


def test_a_closure_is_append_only_and_journalled(admin, logins, reviewer_id):
    runner = logins("runner")
    run = start(runner, reviewer_id)
    runner.execute("SELECT evalledger.brain_eval_cancel_v1(%s, 'operator error')", (run,))
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_journal WHERE table_name = 'brain_eval_run_closure'"
                         ).fetchone()[0] == 1
    for statement in ("UPDATE evalledger.brain_eval_run_closure SET reason = 'other'",
                      "DELETE FROM evalledger.brain_eval_run_closure"):
        with pytest.raises(errors.InsufficientPrivilege):
            admin.execute(statement)


def test_two_sessions_starting_the_same_run_at_once_start_one(admin, logins, reviewer_id):
    """Neither sees the other's uncommitted run, so the trigger admits both: the index makes the
    second wait for the first and fail once it commits."""
    first, second = logins("runner", autocommit=False), logins("runner", autocommit=False)
    start(first, reviewer_id)
    thread, outcome = in_thread(lambda: start(second, reviewer_id))
    wait_until_waiting(admin, LOGINS["runner"][0])
    first.commit()
    thread.join(20)
    assert isinstance(outcome.get("error"), errors.UniqueViolation), outcome
    assert outcome["error"].diag.constraint_name == "brain_eval_log_one_open_idx"
    second.rollback()
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log WHERE completed_at IS NULL").fetchone()[0] == 1


@pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
def test_two_sessions_racing_under_an_older_snapshot_start_none_beside_the_first(admin, logins, reviewer_id, isolation):
    """A session whose snapshot predates the other's commit: run admission is READ COMMITTED only,
    so it is refused there; the index would refuse it anyway (the second of two sessions of this level
    is refused with the first still uncommitted as well)."""
    first = logins("runner", autocommit=False)
    start(first, reviewer_id)
    second = logins("runner", autocommit=False,
                    options=f"-c default_transaction_isolation={isolation.replace(' ', chr(92) + ' ')}")
    second.execute("SELECT 1")
    first.commit()
    with pytest.raises(errors.InvalidTransactionState):
        start(second, reviewer_id)
    second.rollback()
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log WHERE completed_at IS NULL").fetchone()[0] == 1


# -- the deadline ----------------------------------------------------------------------------------------
def test_an_open_run_past_its_deadline_reads_abandoned_to_every_reader(admin, logins, reviewer_id):
    runner = logins("runner")
    run = start(runner, reviewer_id)
    recorded_ago(admin, run, "14 days - 1 minute")
    assert state(runner, run)[:2] == ("open", None)
    recorded_ago(admin, run, "14 days")
    for role in ("runner", "revops", "auditor", "reviewer"):
        found = state(logins(role), run)
        assert found[:2] == ("abandoned", "fail"), role
        assert found[2].startswith("Abandoned: open past its deadline, "), found
    assert stored(admin, run)[0] is False  # nothing closed it yet: a reader sees it abandoned anyway


def test_the_next_run_of_the_brain_closes_a_run_past_its_deadline(admin, logins, reviewer_id):
    """The attempt: a run left open for ever, never decided. The next run of its brain (here the same
    prompt and catalog, which the open run would otherwise refuse) closes it as abandoned."""
    runner = logins("runner")
    old = start(runner, reviewer_id)
    recorded_ago(admin, old, "15 days")
    new = start(runner, reviewer_id)
    done, decision, rationale, hard = stored(admin, old)
    assert (done, decision, hard) == (True, "fail", False)
    assert rationale.startswith("Abandoned: open past its deadline, ") and rationale.endswith("closed by the database")
    assert closure(admin, old)[0] == "abandoned"
    assert state(runner, old)[0] == "abandoned" and state(runner, new)[0] == "open"
    # The recompute re-derives the abandonment from the stored closure.
    row = admin.execute("SELECT evalledger.ledger_recompute_brain_eval_v2(l) FROM evalledger.brain_eval_log l "
                        "WHERE eval_run_id = %s", (old,)).fetchone()[0]
    assert (row["decision"], row["decision_rationale"]) == ("fail", rationale)


def test_a_whole_run_completed_past_its_deadline_is_abandoned_not_decided(admin, logins, reviewer_id):
    """The neighbour: leave a run open, and complete it weeks later only if it looks good."""
    runner = logins("runner")
    run = record_run(runner, reviewer_id, count=2, complete=False, registry=admin, review_conn=admin)
    recorded_ago(admin, run, "20 days")
    decision = brain_eval.complete_run(runner, run)
    assert decision.decision == "fail" and decision.decision_rationale.startswith("Abandoned: open past its deadline")
    assert closure(admin, run)[0] == "abandoned"


def test_the_deadline_is_counted_in_utc_whatever_the_session_time_zone(admin, logins, reviewer_id):
    """14 days counted as 14 x 24 hours: in no crafted TimeZone (a daylight-saving shift of days) is
    a run 1 minute short of it abandoned, or one 1 minute past it open."""
    runner = logins("runner")
    run = start(runner, reviewer_id)
    for ago, expected in (("14 days - 1 minute", "open"), ("14 days 1 minute", "abandoned")):
        recorded_ago(admin, run, ago)
        for zone in crafted_zones(runner)[::37]:
            set_zone(runner, zone)
            assert state(runner, run)[0] == expected, (zone, ago)
    runner.execute("RESET TimeZone")


def test_the_rubric_sets_the_deadline(admin, logins, reviewer_id):
    """A rubric's open_run_days is its deadline (a rubric row as the owner admits one)."""
    definition = admin.execute("SELECT definition FROM evalledger.rubric WHERE suite = 'brain-eval' "
                               "ORDER BY rubric_id DESC LIMIT 1").fetchone()[0]
    import psycopg.types.json
    rubric = admin.execute("INSERT INTO evalledger.rubric (suite, version, definition) "
                           "VALUES ('brain-eval', 'v1-deadline-2', %s) RETURNING rubric_id",
                           (psycopg.types.json.Jsonb({**definition, "open_run_days": 2}),)).fetchone()[0]
    assert admin.execute("SELECT evalledger.brain_eval_run_deadline_v1(now(), %s) - now()", (rubric,)
                         ).fetchone()[0].total_seconds() == 2 * 86400


@pytest.mark.parametrize("days", ["14", 0, -1, 367, None])
def test_a_rubric_deadline_that_is_not_a_number_of_days_is_refused(admin, logins, days):
    """The owner admits rubrics: one whose open_run_days the deadline could not count by is refused."""
    import psycopg.types.json
    definition = admin.execute("SELECT definition FROM evalledger.rubric WHERE suite = 'brain-eval' "
                               "ORDER BY rubric_id DESC LIMIT 1").fetchone()[0]
    with pytest.raises(errors.CheckViolation, match="open_run_days must be a number of days from 1 to 366"):
        logins("owner").execute("INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('brain-eval', "
                                "'v1-bad-deadline', %s)", (psycopg.types.json.Jsonb({**definition, "open_run_days": days}),))


def test_a_closure_ages_and_is_purged_with_its_run(admin, logins, reviewer_id):
    """A cancelled run past the purge horizon goes whole: its closure first (it references the run)."""
    from tests.db.test_retention import age_run, purge_as_retention
    runner = logins("runner")
    run = start(runner, reviewer_id)
    runner.execute("SELECT evalledger.brain_eval_cancel_v1(%s, 'superseded')", (run,))
    age_run(admin, run, "now() - interval '8 years'")
    with admin.transaction():
        purged = purge_as_retention(admin)
    assert {(t, n, r) for t, n, r, _ in purged} >= {("brain_eval_run_closure", 1, run), ("brain_eval_log", 1, run)}
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_run_closure WHERE eval_run_id = %s",
                         (run,)).fetchone()[0] == 0
