"""A work-quality snapshot's comparison with the previous one is made under its own rubric's policy (its
rubric_id: the one its verdicts were admitted under), at its completion and at the recompute alike
(migration 0158; docs/guards.md section 35, docs/ledger.md "--recompute").

work_quality_decide_v1 compared under the policy of whichever rubric was active when it ran, so once a
rubric of another same band was activated, the recompute derived an honest snapshot's comparison (and
its document) again under the new band and named both."""

from __future__ import annotations

import pytest
from psycopg.types.json import Jsonb

from tests.db.test_takes_and_work_quality_intervals_are_stored_at_completion import wq_snapshot
from tests.ledger_forge import rewrite

pytestmark = pytest.mark.db


def activate_wider_band(admin) -> None:
    """A work-quality rubric whose same band is 0.2 (was 0.05), activated."""
    definition = admin.execute("SELECT definition FROM evalledger.rubric WHERE rubric_id = "
                               "evalledger.active_rubric_v1('work-quality')").fetchone()[0]
    definition["compare"] = {"same_band": 0.2, "regress_tolerance": 0.3}
    admin.execute("INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('work-quality', 'wider', %s)",
                  (Jsonb(definition),))
    admin.execute("INSERT INTO evalledger.rubric_activation (suite, rubric_id, reason) SELECT suite, rubric_id, "
                  "'a wider same band' FROM evalledger.rubric WHERE suite = 'work-quality' AND version = 'wider'")


def test_a_snapshots_comparison_is_re_derived_under_its_own_rubric_whatever_was_activated_since(admin, connect_as):
    runner = connect_as("evalledger_runner")
    wq_snapshot(runner, "r1", scores=(0.8, 0.55))
    second = wq_snapshot(runner, "r2", scores=(0.75, 0.45))
    comparison = admin.execute("SELECT comparison FROM evalledger.eval_work_quality_snapshots WHERE snapshot_id = %s",
                               (second,)).fetchone()[0]
    assert (comparison["overall_delta"], comparison["verdict"]) == (-0.075, "worse")
    activate_wider_band(admin)
    # Under the rubric active now the same drop is "same": the recompute compares under the snapshot's own.
    assert admin.execute("SELECT evalledger.work_quality_compare_v1(p.mean_scores, s.mean_scores, s.prev_run_id) "
                         "->> 'verdict' FROM evalledger.eval_work_quality_snapshots s "
                         "JOIN evalledger.eval_work_quality_snapshots p ON p.snapshot_id = s.prev_snapshot_id "
                         "WHERE s.snapshot_id = %s", (second,)).fetchone()[0] == "same"
    auditor = connect_as("evalledger_auditor")
    assert auditor.execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []
    # And a comparison rewritten to what the new band would say is named.
    rewrite(admin, "eval_work_quality_snapshots", "comparison = jsonb_set(comparison, '{verdict}', '\"same\"')",
            "snapshot_id = %s", (second,))
    assert auditor.execute("SELECT table_name, column_name FROM evalledger.ledger_recompute_v3()").fetchall() == [
        ("eval_work_quality_snapshots", "comparison")]
