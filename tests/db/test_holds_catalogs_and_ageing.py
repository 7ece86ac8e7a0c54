"""Holds, catalogs and ageing. A hold is placed unreleased (its release is a row with who and when);
every run names a loaded catalog (so its stale-fixture questions are asked); an active
work-quality target's history still ages out (the chain of snapshots pins nothing). Tried as the
owner's and the runner's own logins (docs/guards.md, section 23)."""

from __future__ import annotations

import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from evalledger.suites.brain_eval import store
from tests.builders import BRAIN_PROMPTS, record_run, register_prompt, run_fields
from tests.db.insider_logins import logins, refused  # noqa: F401 (fixture)
from tests.db.test_retention import purge_committed, set_clock

OLD = "timezone('UTC', timezone('UTC', now()) - interval '8 years')"


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


@pytest.mark.parametrize("scope", ["eval_run_id", "target_id", "range"])
def test_a_hold_is_never_placed_already_released(admin, logins, reviewer_id, scope):
    """Released in 2001, with no release row and no one named: refused; a release is a row."""
    run_id = record_run(admin, reviewer_id, count=1).eval_run_id
    columns = {"eval_run_id": ("eval_run_id", "%(run)s"), "target_id": ("target_id", "'AGT-901'"),
               "range": ("held_from, held_to", "now() - interval '1 year', now()")}[scope]
    with refused(admin, errors.CheckViolation, r'new row for relation "legal_hold" violates check constraint '
                 r'"legal_hold_released_by_a_release_row"', "legal_hold_released_by_a_release_row"):
        logins("owner").execute(f"INSERT INTO evalledger.legal_hold ({columns[0]}, reason, released_at) "
                                f"VALUES ({columns[1]}, 'already over', '2001-01-01')", {"run": run_id})


def test_a_run_names_a_loaded_catalog(admin, logins, reviewer_id):
    """A one-question run naming a catalog never loaded decided pass, its stale questions never asked."""
    runner = logins("runner")
    with refused(admin, errors.ForeignKeyViolation, "evalledger: question catalog v99-never is not loaded",
                 "brain_eval_log_catalog_loaded") as caught:
        store.start_run(runner, question_count=1, reviewer_user_id=reviewer_id,
                        **run_fields(question_catalog_version="v99-never"))
    assert caught.value.diag.column_name == "question_catalog_version"


def snapshot(runner, name, run_id, score):
    """A completed work-quality run of target `name` judged by one model at `score` on every dimension."""
    sid = runner.execute("INSERT INTO evalledger.eval_work_quality_snapshots (origin, kind, name, run_id, models) "
                         "VALUES ('run', 'bot', %s, %s, '{openai:gpt-4o}') RETURNING snapshot_id", (name, run_id)).fetchone()[0]
    reply = {d: score for d in ("efficacy", "completeness", "output_quality", "restraint", "reliability",
                                "value_for_money", "overall")} | {"narrative": "n", "confidence": 0.9}
    runner.execute("INSERT INTO evalledger.eval_work_quality_judge_verdicts (snapshot_id, model, recorded, response_json) "
                   "VALUES (%s, 'openai:gpt-4o', false, %s)", (sid, Jsonb(reply)))
    runner.execute("SELECT evalledger.work_quality_complete_v1(%s)", (sid,))
    return sid


def age_snapshots(admin, ids, clock=OLD):
    with admin.transaction():
        where = f"snapshot_id = ANY (ARRAY{list(ids)}::bigint[])"
        set_clock(admin, "eval_work_quality_snapshots", "created_at", clock, where)
        set_clock(admin, "eval_work_quality_judge_verdicts", "snapshot_created_at", clock, where)
        set_clock(admin, "eval_work_quality_snapshot_uncertainty", "run_created_at", clock, where)


def test_an_active_targets_history_still_ages_out(admin, logins):
    """Each snapshot compares with the one before it; the chain once kept every snapshot of an
    active target for ever. Now each goes when it is due; the kept one keeps its comparison and the
    previous run's id."""
    runner = logins("runner")
    s1, s2, s3 = (snapshot(runner, "bot-a", f"r{n}", 0.5 + n / 10) for n in (1, 2, 3))
    age_snapshots(admin, [s1, s2])
    plan = {r[0]: r[1:5] for r in logins("auditor").execute("SELECT * FROM evalledger.retention_plan_v2()")}
    assert plan["eval_work_quality_snapshots"] == (1, 0, 2, 0)
    purged = purge_committed(admin)
    assert ("eval_work_quality_snapshots", 2, None, None) in purged
    assert ("eval_work_quality_judge_verdicts", 2, None, None) in purged
    kept = admin.execute("SELECT snapshot_id, prev_run_id, comparison ->> 'prev_run_id', snapshot_json ->> 'prev_run_id' "
                         "FROM evalledger.eval_work_quality_snapshots").fetchall()
    assert kept == [(s3, "r2", "r2", "r2")]
    # Its history reads on: the comparison it made is its own row's.
    assert logins("revops").execute("SELECT run_id, prev_run_id, verdict FROM evalledger.work_quality_history_v1 "
                                    "WHERE name = 'bot-a'").fetchall() == [("r3", "r2", "better")]


def test_a_range_hold_keeps_one_snapshot_of_a_chain_and_lets_the_next_go(admin, logins):
    runner = logins("runner")
    s1, s2, _ = (snapshot(runner, "bot-b", f"r{n}", 0.5) for n in (1, 2, 3))
    age_snapshots(admin, [s1], f"{OLD} - interval '1 day'")
    age_snapshots(admin, [s2])
    held = admin.execute("SELECT created_at FROM evalledger.eval_work_quality_snapshots WHERE snapshot_id = %s",
                         (s1,)).fetchone()[0]
    logins("owner").execute("INSERT INTO evalledger.legal_hold (held_from, held_to, reason) VALUES (%s, %s, 'matter')",
                            (held, held))
    purge_committed(admin)
    assert [r[0] for r in admin.execute("SELECT run_id FROM evalledger.eval_work_quality_snapshots ORDER BY 1")] == \
        ["r1", "r3"]
