"""`evalledger ledger ...` as an auditor uses it: seal, digest, verify, proof and consistency; the proof
checked by check.py alone, copied away from the package and run with nothing but Python's standard
library; completion and retention sealing on their own; doctor's warnings."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evalledger.ledger import check
from tests.builders import BRAIN_PROMPTS, record_run, register_prompt
from tests.cli import run_cli
from tests.ledger_forge import rejournal, reseal, rewrite

CHECK = Path(check.__file__)


@pytest.fixture
def env(dsn, admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)
    return {"DATABASE_URL": dsn}


@pytest.fixture
def run_id(env, connect_as, reviewer_id):
    """A completed 3-question run, decided fail (its hallucinations miss a hard criterion)."""
    def hallucinating(number, row):
        row["hallucinations_detected"] = 1
    return str(record_run(connect_as("evalledger_runner"), reviewer_id, count=3, bend=hallucinating).eval_run_id)


def digest_to(env, path: Path) -> dict:
    result = run_cli("ledger", "digest", "--out", str(path), env=env)
    assert result.code == 0, result.err
    return json.loads(path.read_text())


def test_seal_digest_and_verify(env, run_id, tmp_path):
    sealed = run_cli("ledger", "seal", env=env)
    assert sealed.code == 0 and sealed.out.startswith("sealed block 1: "), sealed.out
    assert run_cli("ledger", "seal", env=env).out == "nothing to seal: every final journal entry is in a block\n"
    digest = digest_to(env, tmp_path / "d1.json")
    assert set(digest) == {"schema_version", "kind", "canon", "ledger_id", "database", "block", "block_hash",
                           "ledger_size", "ledger_root", "entries", "sealed_at", "taken_at", "code_fingerprint",
                           "code"}
    assert (digest["kind"], digest["canon"], digest["block"], digest["ledger_size"]) == ("ledger_digest", "canon-v1", 1, 1)
    result = run_cli("ledger", "verify", "--digest", str(tmp_path / "d1.json"), env=env)
    assert result.code == 0, result.out + result.err
    assert result.out.startswith("verified: ") and ", 1 digest; 0 entries not sealed yet (" in result.out
    shown = json.loads(run_cli("ledger", "verify", "--json", "--recompute", env=env).out)
    assert (shown["kind"], shown["verified"], shown["findings"], shown["checked"]["recomputed"]) == \
        ("ledger_verify", True, [], True)


def test_verify_names_each_finding_and_exits_1(env, admin, run_id, tmp_path):
    digest_to(env, tmp_path / "d1.json")
    rewrite(admin, "brain_eval_log", "decision = 'pass'", "eval_run_id = %s", (run_id,))
    result = run_cli("ledger", "verify", "--digest", str(tmp_path / "d1.json"), "--recompute", env=env)
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0].startswith(f'row_changed: brain_eval_log {{"eval_run_id":"{run_id}"}}: decision differs from '
                               "journal entry ")
    assert lines[1] == (f'recomputed: brain_eval_log {{"eval_run_id":"{run_id}"}}: decision is "pass", but its '
                        'inputs decide "fail"')
    assert lines[2].startswith("tampering: 2 findings (")
    found = json.loads(run_cli("ledger", "verify", "--json", env=env).out)
    assert found["verified"] is False
    assert [(f["kind"], f["table"], f["key"], f["columns"]) for f in found["findings"]] == [
        ("row_changed", "brain_eval_log", {"eval_run_id": run_id}, ["decision"])]


@pytest.mark.parametrize("content, says", [("not json", "d.json:1: not JSON"),
                                           ('{"kind": "receipt"}', "not an evalledger canon-v1 digest"),
                                           (None, "no such digest file")])
def test_a_bad_digest_file_is_one_line_and_exit_3(env, run_id, tmp_path, content, says):
    path = tmp_path / "d.json"
    if content is not None:
        path.write_text(content)
    result = run_cli("ledger", "verify", "--digest", str(path), env=env)
    assert result.code == 3 and result.out == ""
    assert result.err.startswith("evalledger: error: ") and says in result.err and result.err.count("\n") == 1


def test_a_digest_with_a_key_twice_is_refused_not_read_as_its_last_value(env, run_id, tmp_path):
    """A digest whose ledger_root is given twice, a forged root first and the true one last (what
    json reads), shows a reader of the file one root and verifies another: verify refuses it, as
    the offline check does, in one line, exit 3. So does publish, reading the newest one there."""
    digest_to(env, tmp_path / "true.json")
    text = (tmp_path / "true.json").read_text()
    twice = tmp_path / "published" / f"digest-{10**8:08d}-20261206T000000000000Z.json"
    twice.parent.mkdir()
    twice.write_text(text.replace("{", '{\n  "ledger_root": "' + "0" * 64 + '",', 1))
    result = run_cli("ledger", "verify", "--digest", str(twice), env=env)
    assert result.code == 3 and result.out == "", result.out
    assert result.err == f"evalledger: error: {twice}: key 'ledger_root' appears twice\n"
    assert run_cli("ledger", "verify", "--digest", str(tmp_path / "true.json"), env=env).code == 0
    published = run_cli("ledger", "publish", str(twice.parent), "--wait", "0", env=env)
    assert published.code == 3 and "the newest digest published cannot be read: key 'ledger_root' appears twice" \
        in published.err, published.err


def standalone_check(tmp_path: Path, *files: Path) -> subprocess.CompletedProcess:
    """check.py copied into a folder of its own and run by Python isolated from everything (-I: no
    environment, no user site, no script folder; -S: no site-packages), in an empty environment: it
    could import nothing of evalledger, psycopg or click even if it tried."""
    alone = tmp_path / "alone"
    alone.mkdir(exist_ok=True)
    shutil.copy(CHECK, alone / "check.py")
    return subprocess.run([sys.executable, "-I", "-S", str(alone / "check.py"), *map(str, files)],
                          capture_output=True, text=True, env={}, cwd=alone, timeout=60)


def test_a_proof_checks_with_the_standard_library_alone(env, run_id, tmp_path):
    digest_to(env, tmp_path / "d1.json")
    made = run_cli("ledger", "proof", run_id, "--digest", str(tmp_path / "d1.json"), "--out", str(tmp_path / "p.json"),
                   env=env)
    assert made.code == 0 and made.out.startswith("proof of "), made.err
    proof = json.loads((tmp_path / "p.json").read_text())
    tables = {r["table"] for r in proof["rows"]}
    assert {"brain_eval_log", "brain_eval_question_score", "brain_analysis_log", "brain_eval_review_entry",
            "brain_eval_run_review", "rubric"} <= tables
    done = standalone_check(tmp_path, tmp_path / "p.json", tmp_path / "d1.json")
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    assert done.stdout == (f"ok: {len(proof['rows'])} rows of {run_id}, every row its manifest names, are in the "
                           f"ledger of 1 block that {tmp_path / 'd1.json'} holds\n")
    # The package's module runs the same check.
    module = subprocess.run([sys.executable, "-m", "evalledger.ledger.check", str(tmp_path / "p.json"),
                             str(tmp_path / "d1.json")], capture_output=True, text=True, timeout=60)
    assert module.returncode == 0 and module.stdout == done.stdout


def one_byte_changed(text: str, at: int) -> str:
    """text with the hex digit at `at` changed (a byte of the hash it spells)."""
    return text[:at] + ("0" if text[at] != "0" else "1") + text[at + 1:]


@pytest.mark.parametrize("where, says", [
    ("row", "its canonical form hashes to "),
    ("entry_path", "its entry_path does not lead from its journal entry to block 1's root"),
    ("block hash", "block 1: its header hashes to "),
    ("ledger_path", "block 1: its ledger path does not lead to the digest's ledger root"),
])
def test_one_byte_changed_in_a_proof_fails_saying_where(env, run_id, tmp_path, where, says):
    digest_to(env, tmp_path / "d1.json")
    run_cli("ledger", "proof", run_id, "--out", str(tmp_path / "p.json"), env=env)
    proof = json.loads((tmp_path / "p.json").read_text())
    row = next(r for r in proof["rows"] if r["table"] == "brain_eval_log")
    if where == "row":
        row["canonical"] = row["canonical"].replace('"decision":"fail"', '"decision":"fall"')
    elif where == "entry_path":
        row["entry_path"][0] = one_byte_changed(row["entry_path"][0], 5)
    elif where == "block hash":
        proof["blocks"][0]["hash"] = one_byte_changed(proof["blocks"][0]["hash"], 9)
    else:
        proof["blocks"][0]["ledger_path"] = [one_byte_changed(check.ZERO_HASH, 3)]
    (tmp_path / "p.json").write_text(json.dumps(proof))
    done = standalone_check(tmp_path, tmp_path / "p.json", tmp_path / "d1.json")
    assert done.returncode == 1
    assert says in done.stdout and all(line.startswith("FAIL: ") for line in done.stdout.splitlines()), done.stdout
    if where == "row":
        assert done.stdout.startswith(f"FAIL: row 1 (brain_eval_log {{\"eval_run_id\":\"{run_id}\"}}): ")


def test_the_checker_says_what_it_cannot_read(tmp_path):
    (tmp_path / "p.json").write_text("{")
    done = standalone_check(tmp_path, tmp_path / "p.json", tmp_path / "missing.json")
    assert done.returncode == 3 and done.stdout == "" and done.stderr.startswith("check: error: ")
    usage = standalone_check(tmp_path, tmp_path / "p.json")
    assert usage.returncode == 3 and "give a proof and its digest" in usage.stderr


def test_consistency_between_two_digests_and_after_a_rewrite(env, admin, connect_as, reviewer_id, run_id, tmp_path):
    old = digest_to(env, tmp_path / "old.json")
    record_run(connect_as("evalledger_runner"), reviewer_id, count=2)
    new = digest_to(env, tmp_path / "new.json")
    assert (old["ledger_size"], new["ledger_size"]) == (1, 2)
    result = run_cli("ledger", "consistency", str(tmp_path / "old.json"), str(tmp_path / "new.json"),
                     "--out", str(tmp_path / "c.json"), env=env)
    assert (result.code, result.out) == (0, f"consistent: the ledger of 2 blocks ({tmp_path / 'new.json'}) extends the "
                                            f"ledger of 1 block ({tmp_path / 'old.json'}) unchanged (block headers: "
                                            "`ledger verify` checks their contents)\n")
    offline = standalone_check(tmp_path, tmp_path / "c.json", tmp_path / "old.json", tmp_path / "new.json")
    assert offline.returncode == 0 and offline.stdout.startswith("ok: the ledger of digest "), offline.stdout
    # A superuser rewrites the old run's decision and everything after it, chain included...
    rewrite(admin, "brain_eval_log", "decision = 'pass'", "eval_run_id = %s", (run_id,))
    rejournal(admin, env["DATABASE_URL"], "brain_eval_log", f'{{"eval_run_id":"{run_id}"}}')
    reseal(admin, env["DATABASE_URL"], 1)
    # ...and the newest digest taken now no longer extends the old one.
    later = digest_to(env, tmp_path / "later.json")
    broken = run_cli("ledger", "consistency", str(tmp_path / "old.json"), str(tmp_path / "later.json"), env=env)
    assert broken.code == 1 and broken.out.startswith("inconsistent: "), broken.out
    assert later["ledger_size"] == 2


def unsealed(admin) -> int:
    return admin.execute("SELECT count(*) FROM evalledger.ledger_journal WHERE txid >= "
                         "coalesce((SELECT max(hi_txid) FROM evalledger.ledger_block), 0)").fetchone()[0]


def test_completion_seals_its_own_entries(env, admin, connect_as, reviewer_id):
    open_run = record_run(connect_as("evalledger_runner"), reviewer_id, count=3, complete=False)
    assert unsealed(admin) > 0
    result = run_cli("brain-eval", "complete", str(open_run), env=env)
    assert result.code == 0, result.err
    assert unsealed(admin) == 0


def test_retention_apply_seals_before_and_after(env, admin, run_id):
    assert unsealed(admin) > 0
    result = run_cli("retention", "apply", env=env)
    assert result.code == 0, result.err
    assert unsealed(admin) == 0


def test_doctor_warns_until_a_digest_is_taken_and_when_entries_wait_a_day(env, admin, run_id, tmp_path):
    run_cli("ledger", "seal", env=env)
    warned = run_cli("doctor", env=env)
    assert "warn  journal: no digest was ever taken: " in warned.out, warned.out
    digest_to(env, tmp_path / "d.json")
    assert "ok    journal: every ledger table journalled; blocks sealed and digested\n" in run_cli("doctor", env=env).out
    admin.execute("INSERT INTO evalledger.target (target_id, kind, display_name) VALUES ('AGT-970', 'bot', 'waits')")
    with admin.transaction():  # as if it had waited two days for a seal
        admin.execute("UPDATE pg_catalog.pg_trigger SET tgenabled = 'D' WHERE tgname = 'ledger_journal_00_append_only'")
        admin.execute("UPDATE pg_catalog.pg_class SET relhastriggers = true WHERE oid = 'evalledger.ledger_journal'::regclass")
        admin.execute("UPDATE evalledger.ledger_journal SET recorded_at = now() - interval '2 days' "
                      "WHERE row_key = '{\"target_id\":\"AGT-970\"}'")
        admin.execute("UPDATE pg_catalog.pg_trigger SET tgenabled = 'A' WHERE tgname = 'ledger_journal_00_append_only'")
    stale = run_cli("doctor", env=env)
    assert "warn  journal: entries written since " in stale.out and "are not sealed (no block for over 24 hours)" in stale.out
    assert stale.code == 0


def test_doctor_fails_when_a_table_is_not_journalled(env, admin):
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute("CREATE TABLE evalledger.unjournalled (id bigint PRIMARY KEY)")
        admin.execute("CALL evalledger.seal_tables_v2()")
    result = run_cli("doctor", env=env)
    assert result.code == 1
    assert "fail  journal: unjournalled no journal trigger unjournalled_90_journal " in result.out


def test_verify_says_in_one_line_that_a_table_has_a_column_canon_v1_cannot_write(env, admin):
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute("CREATE TABLE evalledger.blobs (id bigint PRIMARY KEY, data bytea)")
        admin.execute("CALL evalledger.seal_tables_v2()")
    result = run_cli("ledger", "verify", env=env)
    assert result.code == 3 and result.err.count("\n") == 1
    assert "canon-v1 has no form for column blobs.data of type bytea" in result.err


@pytest.mark.parametrize("field, value, says", [
    ("sealed_at", "2026-01-01T00:00:00.000000Z", "was sealed at "),
    ("entries", 1, " entries, but "),
    ("block_hash", "0" * 64, "the block (or one before it) was rewritten"),
])
def test_verify_checks_every_field_of_a_digest(env, run_id, tmp_path, field, value, says):
    digest = digest_to(env, tmp_path / "d.json")
    digest[field] = value
    (tmp_path / "d.json").write_text(json.dumps(digest))
    result = run_cli("ledger", "verify", "--no-remember", "--digest", str(tmp_path / "d.json"), env=env)
    assert result.code == 1 and result.out.startswith("digest_mismatch: ") and says in result.out, result.out


@pytest.mark.parametrize("content, says", [
    ('"schema_version": 1', "its schema_version is 2"),
    ('"ledger_root": "', "the digest's ledger_root is not 64 lowercase hex digits"),
])
def test_check_refuses_an_unknown_version_and_uppercase_hex(env, run_id, tmp_path, content, says):
    digest_to(env, tmp_path / "d.json")
    run_cli("ledger", "proof", run_id, "--out", str(tmp_path / "p.json"), env=env)
    text = (tmp_path / "d.json").read_text()
    if content.startswith('"schema'):
        text = text.replace(content, '"schema_version": 2')
    else:
        at = text.index(content) + len(content)
        text = text[:at] + text[at:at + 64].upper() + text[at + 64:]
    (tmp_path / "d.json").write_text(text)
    done = standalone_check(tmp_path, tmp_path / "p.json", tmp_path / "d.json")
    assert done.returncode == 1 and says in done.stdout, done.stdout
