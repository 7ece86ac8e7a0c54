"""Each digest pins a fingerprint of the ledger's code (issue 35, item 2): every function body, trigger,
policy, grant and view definition of the ledger's schemas. A superuser's catalog edit (no DDL, so no event
trigger sees it) of any of them is named by verify against a digest taken before."""

from __future__ import annotations

import json

from evalledger.ledger import code, digest as digests
from tests.cli import run_cli
from tests.ledger_forge import take_digest, verified


def test_a_catalog_edit_of_a_body_a_trigger_function_a_policy_and_a_grant_is_named(admin, tmp_path):
    held = take_digest(admin)
    assert held["code_fingerprint"] == code.fingerprint(held["code"])
    assert "function evalledger.ledger_recompute_v3()" in held["code"]
    (tmp_path / "held.json").write_text(digests.dump(held))
    # The recompute blanked; the append-only guard's body gutted; the auditor's policy on the holds opened to
    # every role; SELECT on the holds granted to PUBLIC. Each straight in the catalog.
    admin.execute("UPDATE pg_catalog.pg_proc SET prosrc = 'SELECT NULL::text, NULL::text, NULL::text, NULL::jsonb, "
                  "NULL::jsonb WHERE false' WHERE oid = 'evalledger.ledger_recompute_v3()'::regprocedure")
    admin.execute("UPDATE pg_catalog.pg_proc SET prosrc = 'BEGIN RETURN COALESCE(NEW, OLD); END' "
                  "WHERE oid = 'evalledger.refuse_change_v3()'::regprocedure")
    admin.execute("UPDATE pg_catalog.pg_policy SET polroles = '{0}' WHERE polname = 'legal_hold_auditor'")
    admin.execute("UPDATE pg_catalog.pg_class SET relacl = array_append(relacl, '=r/evalledger_code'::aclitem) "
                  "WHERE oid = 'evalledger.legal_hold'::regclass")
    report = verified(admin.info.dsn, [("held.json", held)])
    assert [f.line() for f in report.findings] == [
        "code_changed: function evalledger.ledger_recompute_v3() was changed since held.json was taken",
        "code_changed: function evalledger.refuse_change_v3() was changed since held.json was taken",
        "code_changed: policy evalledger.legal_hold.legal_hold_auditor was changed since held.json was taken",
        "code_changed: relation evalledger.legal_hold was changed since held.json was taken"]
    result = run_cli("ledger", "verify", "--digest", str(tmp_path / "held.json"), env={"DATABASE_URL": admin.info.dsn})
    assert result.code == 1 and "code_changed: function evalledger.ledger_recompute_v3()" in result.out


def test_an_untouched_ledgers_code_is_the_digests_and_the_cli_prints_its_fingerprint(admin, tmp_path):
    result = run_cli("ledger", "digest", "--out", str(tmp_path / "d.json"), env={"DATABASE_URL": admin.info.dsn})
    assert result.code == 0, result.err
    taken = json.loads((tmp_path / "d.json").read_text())
    assert f"code {taken['code_fingerprint']}" in result.out
    assert verified(admin.info.dsn, [("d.json", taken)]).verified
    forged = dict(taken, code={**taken["code"], "function evalledger.ledger_recompute_v3()": "0" * 64})
    assert [f.line() for f in verified(admin.info.dsn, [("forged.json", forged)]).findings] == [
        "digest_unreadable: forged.json: the digest's code is not the code its code_fingerprint pins"]


def test_the_code_is_written_the_same_whatever_the_readers_session_settings(admin):
    """A CHECK's timestamptz constant is written in the session's TimeZone and DateStyle, an interval
    in its IntervalStyle, a float by its extra_float_digits: a digest taken in one zone and verified
    from another named unchanged constraints as changed. The code is read in settings of its own."""
    plain = code.definitions(admin)
    assert any(name.endswith("_capture_time_readable") for name in plain)  # a timestamptz constant
    for setting in ("TimeZone = 'Pacific/Kiritimati'", "DateStyle = 'SQL, DMY'", "IntervalStyle = 'sql_standard'",
                    "extra_float_digits = -3", "bytea_output = 'escape'"):
        admin.execute(f"SET {setting}")
    assert code.definitions(admin) == plain
    assert admin.execute("SHOW TimeZone").fetchone() == ("Pacific/Kiritimati",)  # the session's own, kept
    admin.execute("RESET DateStyle")  # psycopg reads timestamps in ISO only
    held = take_digest(admin)  # taken 14 hours ahead, verified from the server's own zone
    assert [f.line() for f in verified(admin.info.dsn, [("held.json", held)]).findings] == []
