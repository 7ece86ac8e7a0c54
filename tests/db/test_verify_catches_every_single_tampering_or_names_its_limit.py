"""The tampering campaign (issue 35): Hypothesis grows a random ledger (runs of every suite, passing,
failing, open, held, and the gate decisions stored of them) and tries one tampering at a time as the server's superuser would: a row
updated, deleted or inserted with the guards lifted through pg_trigger (the journal lifted too, or
left on), a journal entry edited, deleted or inserted, a sealed block edited or deleted, or the
ledger's code changed through the catalog (a function's body or grant, a policy, a trigger, a
table's grant, a constraint). `verify` against a digest taken before catches each, naming the table
and key (rows), the entry or its block (journal, blocks) or the definition (code), or the case is one
of the limits docs/ledger.md lists under "What it cannot prove", by its title.

Each example tampers inside one transaction and verifies in it (nothing commits), then rolls back,
so the ledger grows only by the runs drawn. Derandomized: the same examples every run (a fixed
count), so its time is bounded; `make check` leaves it out (slow), `make test` runs it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings, strategies as st
from psycopg import errors, sql
from psycopg.types.json import Jsonb

from evalledger.ledger import digest, journal, manifests, package, verify
from tests.builders import BRAIN_PROMPTS, record_run, register_prompt
from tests.ledger_forge import reading, set_triggers

pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parents[2] / "docs" / "ledger.md"


def doc_limits() -> list[str]:
    """The titles of the limits docs/ledger.md lists under "What it cannot prove:"."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("What it cannot prove:", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- \*\*(.+?)\*\*", section, flags=re.M)


# The limits the campaign meets, by their titles in docs/ledger.md.
REVIEWERS_RIGHT = "A change the journal was left on for, of what a role may still change."
ROW_ADDED = "A row added with the journal left on, outside a completed run."
TXID_MOVED = "An entry's transaction id moved within its block."


def test_the_campaigns_limits_are_the_docs():
    assert {REVIEWERS_RIGHT, ROW_ADDED, TXID_MOVED} <= set(doc_limits()), doc_limits()


# -- the random ledger ------------------------------------------------------------------------------
def hallucinating(number, row):
    row["hallucinations_detected"] = 1  # a hard criterion missed: the run fails


def grow(admin, runner, reviewer_id, step: str, size: int) -> None:
    """One step of the ledger, committed: a run of a suite, or a legal hold."""
    from tests.db.test_takes_quality_db import PANEL as TQ_PANEL, start_run, verdict
    from tests.db.test_work_quality_db import judged

    if step == "brain-eval pass":
        record_run(runner, reviewer_id, count=size)
    elif step == "brain-eval fail":
        record_run(runner, reviewer_id, count=size, bend=hallucinating)
    elif step == "brain-eval open":
        record_run(runner, reviewer_id, count=size, complete=False)
    elif step == "takes-quality":
        number = admin.execute("SELECT count(*) FROM evalledger.eval_takes_quality_runs").fetchone()[0]
        run = start_run(runner, rerun=number)
        for model, score in zip(TQ_PANEL, (8, 6, size + 4)):
            verdict(runner, run, model, {d: score for d in ("accuracy", "attribution", "weight_calibration",
                                                            "kind_classification", "signal_density")})
        runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (run,))
        gate_decided(runner, run, ["default", "significant", "possible"][number % 3])
    elif step == "work-quality":
        number = admin.execute("SELECT count(*) FROM evalledger.eval_work_quality_snapshots").fetchone()[0]
        judged(runner, f"r{number}", {"openai:gpt-4o": 0.7, "anthropic:claude-opus-4-7": size / 10})
    else:  # a hold on the newest brain-eval run
        admin.execute("INSERT INTO evalledger.legal_hold (eval_run_id, reason) SELECT eval_run_id, 'matter open' "
                      "FROM evalledger.brain_eval_log ORDER BY created_at DESC LIMIT 1")
    runner.commit()
    admin.commit()


def gate_decided(runner, run: int | None = None, mode: str = "significant") -> None:
    """A regression gate decided and stored by the database (eval_gate_decision): the takes-quality run against
    its own receipt, or (no run) two Snapshot documents."""
    from tests.db.test_gate_decided_by_the_database import BASE, snapshot

    if run is not None:
        runner.execute("INSERT INTO evalledger.eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, "
                       "run_id) SELECT 'takes-quality', %s, 'baseline.json', 'run ' || id, receipt_json, id "
                       "FROM evalledger.eval_takes_quality_runs WHERE id = %s", (mode, run))
    else:
        runner.execute("INSERT INTO evalledger.eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, "
                       "current_doc) VALUES ('work-quality', %s, 'a', 'b', %s, %s)",
                       (mode, Jsonb(snapshot("a", BASE)), Jsonb(snapshot("b", {m: s - 0.2 for m, s in BASE.items()}))))


STEPS = st.lists(st.tuples(st.sampled_from(["brain-eval pass", "brain-eval fail", "brain-eval open", "takes-quality",
                                            "work-quality", "legal hold"]), st.integers(2, 4)), max_size=1)

# -- the tamperings ---------------------------------------------------------------------------------
ROWS = ["row updated, triggers off", "row updated, journal left on", "row deleted, triggers off",
        "row deleted, journal left on", "row inserted, triggers off", "row inserted, journal left on"]
JOURNAL = ["entry edited", "entry deleted", "entry inserted"]
BLOCKS = ["block edited", "block deleted"]
CODE = ["function body", "function grant", "policy", "trigger", "relation grant", "constraint", "event trigger"]
KINDS = ROWS + JOURNAL + BLOCKS + CODE


def changed(column: str, typ: str) -> sql.Composable | None:
    """An expression of column's value, changed, by its type (None: the campaign does not change this type)."""
    c = sql.Identifier(column)
    simple = {"bool": "NOT {c}", "int2": "{c} + 1", "int4": "{c} + 1", "int8": "{c} + 1000003", "numeric": "{c} + 1",
              "float8": "{c} + 1", "text": "{c} || 'x'", "varchar": "{c} || 'x'", "bpchar": "'x' || {c}",
              "name": "({c} || 'x')::name", "uuid": "gen_random_uuid()", "timestamptz": "{c} + interval '1 microsecond'",
              "date": "{c} + 1", "_text": "{c} || '{{x}}'::text[]", "_varchar": "{c} || '{{x}}'::varchar[]",
              "_int4": "{c} || 1", "_int8": "{c} || 1::bigint",
              "jsonb": "CASE jsonb_typeof({c}) WHEN 'object' THEN {c} || '{{\"tampered\": 1}}' "
                       "WHEN 'array' THEN {c} || '1' ELSE to_jsonb('tampered'::text) END"}
    return sql.SQL(simple[typ]).format(c=c) if typ in simple else None


def columns_of(conn, table: str) -> list[tuple[str, str, bool, bool, bool, bool]]:
    """(name, type, in the primary key, in a unique index, generated, identity ALWAYS) of each column."""
    return conn.execute(
        "SELECT a.attname::text, t.typname::text, "
        "       EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indisprimary AND a.attnum = ANY (i.indkey)), "
        "       EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indisunique AND a.attnum = ANY (i.indkey)), "
        "       a.attgenerated <> '', a.attidentity = 'a' "
        "  FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
        " WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        (f"evalledger.{table}",)).fetchall()


def tables_with_rows(conn) -> list[str]:
    found = []
    for table in sorted(set(package.tables()) - set(package.EXEMPT)):
        if conn.execute(sql.SQL("SELECT EXISTS (SELECT FROM evalledger.{})").format(sql.Identifier(table))).fetchone()[0]:
            found.append(table)
    return found


def a_row(conn, table: str, pick: int) -> tuple[str, str]:
    """(ctid, canonical key) of one row of table."""
    count = conn.execute(sql.SQL("SELECT count(*) FROM evalledger.{}").format(sql.Identifier(table))).fetchone()[0]
    return conn.execute(sql.SQL("SELECT x.ctid::text, evalledger.journal_key_v1(x) FROM evalledger.{} x "
                                "ORDER BY x.ctid OFFSET %s LIMIT 1").format(sql.Identifier(table)),
                        (pick % count,)).fetchone()


def lifted(conn, table: str, journal_on: bool) -> None:
    """table's triggers off through the catalog (its journal's too, unless journal_on), and the foreign keys'
    (session_replication_role, which the journal's ENABLE ALWAYS triggers ignore): until the rollback."""
    set_triggers(conn, [table], "D", but="%\\_90\\_journal%" if journal_on else "")
    conn.execute("SET LOCAL session_replication_role = replica")


class Outcome:
    """What a tampering must show: a finding that names it (matches), or the doc's limit it falls under."""

    def __init__(self, what: str, matches, limit: str | None = None):
        self.what, self.matches, self.limit = what, matches, limit


def named(table: str, *keys: str):
    return lambda f: f.table == table and f.key in keys


def tamper_row(conn, kind: str, pick: int, table: str | None = None) -> Outcome | None:
    tables = [table] if table else tables_with_rows(conn)
    table = tables[pick % len(tables)]
    ctid, key = a_row(conn, table, pick // len(tables))
    target = sql.SQL("evalledger.{}").format(sql.Identifier(table))
    journal_on = kind.endswith("journal left on")
    what = f"{kind}: {table} {key}"
    if kind.startswith("row deleted"):
        lifted(conn, table, journal_on)
        conn.execute(sql.SQL("DELETE FROM {} WHERE ctid = %s::tid").format(target), (ctid,))
        return Outcome(what, named(table, key))
    cols = columns_of(conn, table)
    if kind.startswith("row updated"):
        candidates = [(n, t) for n, t, _, _, generated, identity in cols
                      if not generated and not identity and changed(n, t) is not None]
        name, typ = candidates[pick % len(candidates)]
        lifted(conn, table, journal_on)
        try:
            with conn.transaction():
                row = conn.execute(sql.SQL("UPDATE {} x SET {} = {} WHERE ctid = %s::tid AND {} IS NOT NULL "
                                           "RETURNING evalledger.journal_key_v1(x)").format(
                    target, sql.Identifier(name), changed(name, typ), sql.Identifier(name)), (ctid,)).fetchone()
        except (errors.CheckViolation, errors.NotNullViolation, errors.UniqueViolation, errors.StringDataRightTruncation,
                errors.NumericValueOutOfRange, errors.InvalidTextRepresentation, errors.DatetimeFieldOverflow,
                errors.InvalidParameterValue, errors.ExclusionViolation):
            return None
        if row is None:
            return None  # NULL there
        what += f" {name}"
        limit = None
        if journal_on and table == "brain_eval_question_score" and conn.execute(
                "SELECT l.completed_at IS NULL FROM evalledger.brain_eval_question_score q JOIN evalledger.brain_eval_log l "
                "USING (eval_run_id) WHERE evalledger.journal_key_v1(q) = %s", (row[0],)).fetchone()[0]:
            limit = REVIEWERS_RIGHT  # the reviewer's change of an open run's question row
        return Outcome(what, named(table, key, row[0]), limit)
    # inserted: a copy of the row with every column of a unique index changed
    values = [sql.SQL("{} AS {}").format(changed(n, t) if unique and changed(n, t) is not None else sql.Identifier(n),
                                         sql.Identifier(n))
              for n, t, _, unique, generated, _ in cols if not generated]
    names = [sql.Identifier(n) for n, _, _, _, generated, _ in cols if not generated]
    lifted(conn, table, journal_on)
    try:
        with conn.transaction():
            row = conn.execute(sql.SQL("INSERT INTO {} AS x ({}) OVERRIDING SYSTEM VALUE SELECT {} FROM {} WHERE ctid = %s::tid "
                                       "RETURNING evalledger.journal_key_v1(x), to_jsonb(x) ->> 'eval_run_id'").format(
                target, sql.SQL(", ").join(names), sql.SQL(", ").join(values), target), (ctid,)).fetchone()
    except (errors.CheckViolation, errors.NotNullViolation, errors.UniqueViolation, errors.StringDataRightTruncation,
            errors.NumericValueOutOfRange, errors.InvalidTextRepresentation, errors.DatetimeFieldOverflow,
            errors.InvalidParameterValue, errors.ExclusionViolation):
        return None
    new_key, run = row
    what = f"{kind}: {table} {new_key} (a copy of {key})"
    limit = None
    if journal_on:
        # Caught by the manifest when it is a row of a completed brain-eval run (or a completed run itself); else
        # recorded as any write is.
        of_completed = table in manifests.RUN_TABLES and run is not None and conn.execute(
            "SELECT EXISTS (SELECT FROM evalledger.brain_eval_log WHERE eval_run_id = %s AND completed_at IS NOT NULL) "
            "AND EXISTS (SELECT FROM evalledger.ledger_journal WHERE operation = 'MANIFEST' AND row_key LIKE %s)",
            (run, f'%"eval_run_id":"{run}"%')).fetchone()[0]
        limit = None if of_completed else ROW_ADDED
    return Outcome(what, named(table, new_key), limit)


def flip(data: bytes, where: int) -> bytes:
    i = where % len(data)
    return data[:i] + bytes([data[i] ^ 0x5A]) + data[i + 1:]


def tamper_journal(conn, kind: str, pick: int) -> Outcome | None:
    sealed = conn.execute("SELECT entry_id, table_name, row_key, operation, txid FROM evalledger.ledger_journal "
                          "WHERE txid < (SELECT max(hi_txid) FROM evalledger.ledger_block) ORDER BY entry_id").fetchall()
    entry_id, table, key, op, txid = sealed[pick % len(sealed)]
    block = conn.execute("SELECT block_id FROM evalledger.ledger_block WHERE %s >= lo_txid AND %s < hi_txid",
                         (txid, txid)).fetchone()[0]
    set_triggers(conn, ["ledger_journal"], "D")
    if kind == "entry deleted":
        conn.execute("DELETE FROM evalledger.ledger_journal WHERE entry_id = %s", (entry_id,))
        return Outcome(f"entry {entry_id} ({op} {table} {key}) deleted from block {block}",
                       lambda f: f.block == block)
    if kind == "entry inserted":
        new_op = ["INSERT", "UPDATE", "DELETE"][pick % 3]
        new = conn.execute("INSERT INTO evalledger.ledger_journal (entry_id, canon, table_name, operation, row_key, "
                           "row_count, rows_root, row_leaves, column_fingerprints, txid, recorded_at) OVERRIDING SYSTEM VALUE "
                           "SELECT (SELECT max(entry_id) + 1 FROM evalledger.ledger_journal), canon, table_name, %s, row_key, "
                           "row_count, rows_root, row_leaves, column_fingerprints, txid, recorded_at "
                           "FROM evalledger.ledger_journal WHERE entry_id = %s RETURNING entry_id",
                           (new_op, entry_id)).fetchone()[0]
        return Outcome(f"entry {new} ({new_op} {table} {key}) inserted into block {block}",
                       lambda f: f.entry == new or f.block == block)
    field = ["rows_root", "row_key", "recorded_at", "operation", "table_name", "row_count", "txid"][pick // 7 % 7]
    change = {"rows_root": "rows_root = %s", "row_key": "row_key = %s", "recorded_at":
              "recorded_at = recorded_at + interval '1 microsecond'", "operation": "operation = %s",
              "table_name": "table_name = %s", "row_count": "row_count = row_count + 1", "txid": "txid = txid - 1"}[field]
    value = {"rows_root": (flip(b"\x00" * 32, pick),), "row_key": (key.replace('"', '"x', 1) if key else key,),
             "operation": ("DELETE" if op != "DELETE" else "INSERT",),
             # another table's name (an entry of the rubric's own renamed to the rubric would be no edit)
             "table_name": ("rubric" if table != "rubric" else "target",)}.get(field, ())
    if field == "rows_root":
        root = conn.execute("SELECT rows_root FROM evalledger.ledger_journal WHERE entry_id = %s", (entry_id,)).fetchone()[0]
        value = (flip(root, pick),)
    conn.execute(f"UPDATE evalledger.ledger_journal SET {change} WHERE entry_id = %s", (*value, entry_id))
    same_block = field == "txid" and conn.execute("SELECT %s - 1 >= lo_txid FROM evalledger.ledger_block WHERE block_id = %s",
                                                  (txid, block)).fetchone()[0]
    return Outcome(f"entry {entry_id} ({op} {table} {key}) of block {block}: {field} edited",
                   lambda f: f.entry == entry_id or f.block == block, TXID_MOVED if same_block else None)


def tamper_block(conn, kind: str, pick: int) -> Outcome | None:
    blocks = journal.blocks(conn)
    block = blocks[pick % len(blocks)]
    b = block.block_id
    set_triggers(conn, ["ledger_block"], "D")
    if kind == "block deleted":  # the digests logged of it too (their foreign key off)
        conn.execute("SET LOCAL session_replication_role = replica")
        conn.execute("DELETE FROM evalledger.ledger_block WHERE block_id = %s", (b,))
        return Outcome(f"block {b} deleted", lambda f: f.block is not None and f.block >= b)
    field = ["leaves", "merkle_root", "previous_hash", "block_hash", "ledger_root", "entry_count", "sealed_at",
             "sealed_by", "lo_txid", "hi_txid", "first_entry_id", "last_entry_id"][pick // 11 % 12]
    if field in ("leaves", "merkle_root", "previous_hash", "block_hash", "ledger_root"):
        conn.execute(f"UPDATE evalledger.ledger_block SET {field} = %s WHERE block_id = %s",
                     (flip(getattr(block, field), pick), b))
    else:
        change = {"entry_count": "entry_count + 1", "sealed_at": "sealed_at + interval '1 microsecond'",
                  "sealed_by": "'postgres'::name", "lo_txid": "lo_txid - 1", "hi_txid": "hi_txid + 1",
                  "first_entry_id": "first_entry_id - 1", "last_entry_id": "last_entry_id + 1"}[field]
        if field == "sealed_by" and block.sealed_by == "postgres":
            change = "'mallory'::name"
        try:
            with conn.transaction():
                conn.execute(f"UPDATE evalledger.ledger_block SET {field} = {change} WHERE block_id = %s", (b,))
        except errors.CheckViolation:
            return None  # the block table's own constraints refuse it
    return Outcome(f"block {b}: {field} edited", lambda f: f.block == b or (f.block is not None and f.block > b
                                                                             and f.kind == "block_range"))


def pick_from(conn, query: str, pick: int, params=()) -> tuple:
    found = conn.execute(query, params).fetchall()
    return found[pick % len(found)]


SCHEMAS = "('evalledger', 'evalledger_guard')"


def tamper_code(conn, kind: str, pick: int) -> Outcome | None:
    conn.execute("SET LOCAL search_path = pg_catalog")
    if kind in ("function body", "function grant"):
        oid, name, lang = pick_from(conn, "SELECT p.oid, p.oid::regprocedure::text, l.lanname FROM pg_proc p "
                                          "JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang "
                                          f"WHERE n.nspname IN {SCHEMAS} AND p.prokind IN ('f', 'p') ORDER BY 2", pick)
        if kind == "function body":
            conn.execute("UPDATE pg_proc SET prosrc = E'\\n-- changed\\n' || prosrc WHERE oid = %s", (oid,))
        else:
            conn.execute("UPDATE pg_proc SET proacl = array_append(coalesce(proacl, acldefault('f', proowner)), "
                         "makeaclitem('evalledger_revops'::regrole, proowner, 'EXECUTE', true)) WHERE oid = %s", (oid,))
        label = f"function {name}"
    elif kind == "policy":
        oid, label = pick_from(conn, "SELECT y.oid, 'policy ' || y.polrelid::regclass::text || '.' || y.polname FROM pg_policy y "
                                     "JOIN pg_class c ON c.oid = y.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                                     f"WHERE n.nspname IN {SCHEMAS} ORDER BY 2", pick)
        if pick % 2:
            conn.execute("UPDATE pg_policy SET polpermissive = NOT polpermissive WHERE oid = %s", (oid,))
        else:
            conn.execute("UPDATE pg_policy SET polroles = '{0}' WHERE oid = %s", (oid,))
            assume(conn.execute("SELECT true FROM pg_policy WHERE oid = %s AND polroles = '{0}'", (oid,)).fetchone())
    elif kind == "trigger":
        oid, rel, label, tgname = pick_from(
            conn, "SELECT g.oid, g.tgrelid, 'trigger ' || g.tgrelid::regclass::text || '.' || g.tgname, g.tgname::text "
                  "FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                  f"WHERE n.nspname IN {SCHEMAS} AND NOT g.tgisinternal AND NOT c.relispartition ORDER BY 3", pick)
        conn.execute("UPDATE pg_trigger SET tgenabled = 'D' WHERE oid = %s", (oid,))
        conn.execute("UPDATE pg_class SET relhastriggers = true WHERE oid = %s", (rel,))
    elif kind == "relation grant":
        oid, label = pick_from(conn, "SELECT c.oid, 'relation ' || c.oid::regclass::text FROM pg_class c "
                                     "JOIN pg_namespace n ON n.oid = c.relnamespace "
                                     f"WHERE n.nspname IN {SCHEMAS} AND c.relkind IN ('r', 'p', 'v') AND NOT c.relispartition "
                                     "ORDER BY 2", pick)
        conn.execute("UPDATE pg_class SET relacl = array_append(coalesce(relacl, acldefault('r', relowner)), "
                     "makeaclitem('evalledger_revops'::regrole, relowner, 'UPDATE', false)) WHERE oid = %s", (oid,))
    elif kind == "constraint":
        oid, label = pick_from(conn, "SELECT k.oid, 'constraint ' || k.conrelid::regclass::text || '.' || k.conname "
                                     "FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
                                     "JOIN pg_namespace n ON n.oid = c.relnamespace "
                                     f"WHERE n.nspname IN {SCHEMAS} AND k.contype IN ('c', 'f') AND NOT c.relispartition "
                                     "ORDER BY 2", pick)
        conn.execute("UPDATE pg_constraint SET convalidated = false WHERE oid = %s", (oid,))
    else:
        oid, label = pick_from(conn, "SELECT e.oid, 'event_trigger ' || e.evtname FROM pg_event_trigger e "
                                     "JOIN pg_proc p ON p.oid = e.evtfoid JOIN pg_namespace n ON n.oid = p.pronamespace "
                                     f"WHERE n.nspname IN {SCHEMAS} ORDER BY 2", pick)
        conn.execute("UPDATE pg_event_trigger SET evtenabled = 'D' WHERE oid = %s", (oid,))
    conn.execute("RESET search_path")
    journal.prepare(conn)
    return Outcome(f"{kind}: {label}", lambda f: (f.kind == "code_changed" and f.detail.startswith(f"{label} was "))
                   or (f.kind == "journal_trigger" and kind == "trigger" and f"{label}".split(".")[-1] in f.detail))


def tamper(conn, kind: str, pick: int) -> Outcome | None:
    if kind in ROWS:
        return tamper_row(conn, kind, pick)
    if kind in JOURNAL:
        return tamper_journal(conn, kind, pick)
    if kind in BLOCKS:
        return tamper_block(conn, kind, pick)
    return tamper_code(conn, kind, pick)


@pytest.fixture
def ledger(admin, connect_as, reviewer_id):
    """A ledger to grow: the brains registered, one failing run to start with."""
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)
    runner = connect_as("evalledger_runner")
    grow(admin, runner, reviewer_id, "brain-eval fail", 2)
    gate_decided(runner)  # a gate decision in every example's ledger: its table among the tamperable
    runner.commit()
    SEEN.clear()
    HELD.clear()
    yield admin, runner, reviewer_id
    # Derandomized (the same examples every run): what was tried, for the log (pytest -s shows it).
    print(f"\ntampering campaign, derandomized, {sum(SEEN[k] for k in KINDS if k in SEEN)} tamperings tried: "
          + ", ".join(f"{kind} {SEEN[kind]}" for kind in KINDS if kind in SEEN) + "; "
          + ", ".join(f"{what} {SEEN.get(what, 0)}" for what in ("caught", REVIEWERS_RIGHT, ROW_ADDED, TXID_MOVED)))


SEEN: dict[str, int] = {}


HELD: list = []


def campaign(group: list[str], examples: int):
    """The campaign over one group of tamperings: examples of them, each kind drawn from the group."""

    @given(steps=STEPS, kind=st.sampled_from(group), pick=st.integers(0, 10**6))
    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              phases=(Phase.explicit, Phase.generate),
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                     HealthCheck.filter_too_much])
    def run(ledger, dsn, steps, kind, pick):
        admin, runner, reviewer_id = ledger
        for step, size in steps:
            grow(admin, runner, reviewer_id, step, size)
        with reading(dsn) as conn:
            if steps or not HELD:  # sealed, a digest taken, and the ledger as grown verifies clean against it
                digest.seal(admin, 2)
                taken = digest.take(admin, "test")[0]
                if group is not CODE:  # a digest without the code still checks every block (and reads faster)
                    taken = {k: v for k, v in taken.items() if k not in ("code", "code_fingerprint")}
                HELD[:] = [("held", taken)]
                admin.commit()
                clean = verify.verify(conn, HELD, own_snapshot=False)
                assert clean.verified, [f.line() for f in clean.findings]
                conn.rollback()
            outcome = tamper(conn, kind, pick)
            assume(outcome is not None)
            report = verify.verify(conn, HELD, own_snapshot=False)
            conn.rollback()
        SEEN[kind] = SEEN.get(kind, 0) + 1
        SEEN[outcome.limit or "caught"] = SEEN.get(outcome.limit or "caught", 0) + 1
        lines = [f.line() for f in report.findings]
        if outcome.limit is not None:
            assert outcome.limit in doc_limits()
            return  # caught or not: the doc says why it need not be
        assert any(outcome.matches(f) for f in report.findings), f"{outcome.what} went unnamed: {lines}"

    return run


@pytest.mark.parametrize(("group", "examples"), [(ROWS, 24), (JOURNAL, 12), (BLOCKS, 10), (CODE, 14)],
                         ids=["rows", "journal", "blocks", "code"])
def test_verify_catches_every_single_tampering_or_it_is_a_documented_limit(ledger, dsn, group, examples):
    campaign(group, examples)(ledger, dsn)


def test_every_examples_ledger_holds_a_gate_decision_to_tamper_with(ledger, dsn):
    """The tamperable tables are those with rows: every example's ledger holds a gate decision."""
    with reading(dsn) as conn:
        assert "eval_gate_decision" in tables_with_rows(conn)


@pytest.mark.parametrize("kind", ROWS)
def test_every_row_tampering_of_a_gate_decision_is_named_or_a_documented_limit(ledger, dsn, kind):
    """The campaign's row tamperings aimed at eval_gate_decision (a work-quality gate and a takes-quality one),
    every column an UPDATE can change, each verified with --recompute: named, or one of the doc's limits."""
    admin, runner, reviewer_id = ledger
    grow(admin, runner, reviewer_id, "takes-quality", 3)
    digest.seal(admin, 2)
    held = [("held", {k: v for k, v in digest.take(admin, "test")[0].items() if k not in ("code", "code_fingerprint")})]
    admin.commit()
    tried = []
    with reading(dsn) as conn:
        for pick in range(26 if kind.startswith("row updated") else 2):  # 2 rows x 13 columns, coprime
            outcome = tamper_row(conn, kind, pick, table="eval_gate_decision")
            if outcome is None:
                conn.rollback()
                continue
            report = verify.verify(conn, held, recompute=True, own_snapshot=False)
            conn.rollback()
            tried.append(outcome.what)
            if outcome.limit is not None:
                assert outcome.limit in doc_limits()
                continue
            assert any(outcome.matches(f) for f in report.findings), \
                f"{outcome.what} went unnamed: {[f.line() for f in report.findings]}"
    print(f"\n{kind} of eval_gate_decision: {len(tried)} tried")
    assert tried and all("eval_gate_decision" in what for what in tried), tried


def test_an_entry_removed_from_a_sealed_block_is_named_by_its_place(ledger, dsn):
    """The block keeps the removed entry's leaf, not the entry: verify names the block, the place and the entry
    before it."""
    admin = ledger[0]
    digest.seal(admin, 2)
    admin.commit()
    with reading(dsn) as conn:
        block = journal.blocks(conn)[-1]
        ids = [r[0] for r in conn.execute("SELECT entry_id FROM evalledger.ledger_journal WHERE txid >= %s AND txid < %s "
                                          "ORDER BY entry_id", (block.lo_txid, block.hi_txid))]
        set_triggers(conn, ["ledger_journal"], "D")
        conn.execute("DELETE FROM evalledger.ledger_journal WHERE entry_id = %s", (ids[2],))
        report = verify.verify(conn, [], own_snapshot=False)
        conn.rollback()
    gone = [f.line() for f in report.findings if f.kind == "entry_gone"]
    assert gone == [f"entry_gone: block {block.block_id} sealed 1 entry the journal no longer has, at position 2 "
                    f"(after journal entry {ids[1]})"]
