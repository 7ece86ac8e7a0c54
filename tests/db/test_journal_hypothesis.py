"""Hypothesis against the journal: canon-v1 is the same in the database's triggers and in verify's
Python for every value of every type a ledger column has, and a single byte changed anywhere (a row
value, a journal entry, a block) in a randomly grown ledger is caught, every time."""

from __future__ import annotations

import uuid
from datetime import date, datetime, timezone

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from psycopg.types.json import Jsonb

from evalledger.ledger import canon, check, digest, journal, package, verify
from tests.ledger_forge import set_triggers, triggers_lifted

PROBE = """CREATE TABLE evalledger.journal_probe (
    id bigint PRIMARY KEY, b boolean, i integer, n numeric, f double precision, t text, v varchar(40), c char(6),
    u uuid, ts timestamptz, d date, j jsonb, ta text[], ia bigint[], e evalledger.eval_decision)"""
COLUMNS = ("id", "b", "i", "n", "f", "t", "v", "c", "u", "ts", "d", "j", "ta", "ia", "e")
INSERT = (f"INSERT INTO evalledger.journal_probe ({', '.join(COLUMNS)}) VALUES "
          "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::timestamptz, %s::date, %s, %s, %s, %s)")
@pytest.fixture(autouse=True)
def package_knows_the_probe(monkeypatch):
    """The probe table is this module's, not the package's: verify is told of it as the package tells it the rest."""
    tables = {**package.tables(), "journal_probe": frozenset({"id"})}
    monkeypatch.setattr(package, "tables", lambda: tables)


def examples(n: int) -> settings:
    """n examples against one database (the fixtures' state carries over on purpose), no deadline."""
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | text
    | st.decimals(allow_nan=False, allow_infinity=False, min_value=-10**12, max_value=10**12, places=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4), max_leaves=12)
stamp = st.one_of(st.sampled_from(["infinity", "-infinity"]),
                  st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                               timezones=st.just(timezone.utc)).map(lambda d: d.isoformat()))
day = st.one_of(st.sampled_from(["infinity", "-infinity"]),
                st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31)).map(lambda d: d.isoformat()))
row = st.tuples(
    st.booleans() | st.none(), st.integers(-2**31, 2**31 - 1) | st.none(),
    st.decimals(allow_nan=False, allow_infinity=False, min_value=-10**30, max_value=10**30) | st.none(),
    st.floats(allow_nan=False, allow_infinity=False) | st.none(), text | st.none(),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40) | st.none(),
    st.text(st.characters(min_codepoint=33, max_codepoint=0x2FFF, blacklist_categories=("Cs",)), max_size=6) | st.none(),
    st.uuids() | st.none(), stamp | st.none(), day | st.none(), json_value.map(lambda v: Jsonb(v, dumps=check.canonical_json)) | st.none(),
    st.lists(text | st.none(), max_size=4) | st.none(), st.lists(st.integers(-2**63, 2**63 - 1), max_size=4) | st.none(),
    st.sampled_from(["pass", "pass_with_notes", "conditional", "fail"]) | st.none())
ledgers = st.lists(row, min_size=1, max_size=6)


@pytest.fixture
def probe(admin):
    """A journalled table with a column of every type canon-v1 writes, added as a migration adds one."""
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute(PROBE)
        admin.execute("CALL evalledger.seal_tables_v2()")
        admin.execute("CALL evalledger.journal_attach_v2()")
    return admin


def insert(conn, rows) -> None:
    first = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM evalledger.journal_probe").fetchone()[0]
    for n, values in enumerate(rows):
        conn.execute(INSERT, (first + n, *values))


def verify_here(conn, digests=()) -> verify.Report:
    """verify in conn's open transaction (what it inserted or tampered counts; nothing commits)."""
    return verify.verify(conn, list(digests), own_snapshot=False)


@given(rows=ledgers)
@examples(40)
def test_canon_v1_is_the_same_in_the_trigger_and_in_verify(probe, dsn, rows):
    from tests.ledger_forge import reading

    with reading(dsn) as conn:
        insert(conn, rows)
        report = verify_here(conn)
        conn.rollback()
    assert report.verified, [f.line() for f in report.findings]
    assert report.rows >= len(rows)


TARGETS = ("row text", "row number", "entry root", "entry key", "block leaves", "block root", "block hash",
           "block link", "digest")


@pytest.mark.long  # a tampering campaign: a ledger built and verified per example
@given(rows=ledgers, target=st.sampled_from(TARGETS), where=st.integers(0, 10**6), byte=st.integers(1, 255))
@examples(30)
def test_every_single_byte_tampering_is_caught(probe, dsn, rows, target, where, byte):
    from tests.ledger_forge import reading

    insert(probe, rows)
    digest.seal(probe, 2)
    held = digest.take(probe, "test")[0]
    with reading(dsn) as conn:
        assert verify_here(conn, [("held", held)]).verified
        conn.rollback()
        ok = tamper(conn, target, where, byte, held)
        assume(ok)
        report = verify_here(conn, [("held", held)])
        conn.rollback()
    assert not report.verified, f"{target} at {where} (byte {byte}) went unseen"


def flip(data: bytes, where: int, byte: int) -> bytes:
    """data with one byte changed (xor byte, never 0, so it always differs)."""
    i = where % len(data)
    return data[:i] + bytes([data[i] ^ byte]) + data[i + 1:]


def tamper(conn, target: str, where: int, byte: int, held: dict) -> bool:
    """One byte of target changed inside conn's transaction, the guards lifted through the catalog."""
    if target.startswith("row"):
        column = "t" if target == "row text" else "n"
        found = conn.execute(f"SELECT id, {column}::text FROM evalledger.journal_probe WHERE {column} IS NOT NULL "
                             "AND length({0}::text) > 0 ORDER BY id".format(column)).fetchall()
        if not found:
            return False
        key, value = found[where % len(found)]
        if column == "t":
            raw = value.encode("utf-8")
            changed = flip(raw, where // 7, byte & 0x3F or 1)
            try:
                new = changed.decode("utf-8")
            except UnicodeDecodeError:
                return False
            if "\x00" in new:
                return False
        else:
            digits = [i for i, ch in enumerate(value) if ch.isdigit()]
            i = digits[where % len(digits)]
            new = value[:i] + str((int(value[i]) + 1 + byte % 9) % 10) + value[i + 1:]
            if new.lstrip("-").lstrip("0").startswith(".") or new == value:
                return False
        with triggers_lifted(conn, "journal_probe"):
            conn.execute(f"UPDATE evalledger.journal_probe SET {column} = %s::{'text' if column == 't' else 'numeric'} "
                         "WHERE id = %s", (new, key))
        return conn.execute(f"SELECT {column}::text FROM evalledger.journal_probe WHERE id = %s", (key,)).fetchone()[0] != value
    if target.startswith("entry"):
        entries = conn.execute("SELECT entry_id, rows_root, row_key FROM evalledger.ledger_journal ORDER BY entry_id").fetchall()
        entry_id, root, key = entries[where % len(entries)]
        with triggers_lifted(conn, "ledger_journal"):
            if target == "entry root":
                conn.execute("UPDATE evalledger.ledger_journal SET rows_root = %s WHERE entry_id = %s",
                             (flip(root, where // 3, byte), entry_id))
            else:
                changed = flip(key.encode("utf-8"), where // 3, byte & 0x3F or 1)
                try:
                    conn.execute("UPDATE evalledger.ledger_journal SET row_key = %s WHERE entry_id = %s",
                                 (changed.decode("utf-8").replace("\x00", "?"), entry_id))
                except UnicodeDecodeError:
                    return False
        return True
    if target == "digest":
        i = where % 64
        held["block_hash"] = held["block_hash"][:i] + ("0" if held["block_hash"][i] != "0" else "1") + held["block_hash"][i + 1:]
        return True
    blocks = journal.blocks(conn)
    block = blocks[where % len(blocks)]
    column, value = {"block leaves": ("leaves", block.leaves), "block root": ("merkle_root", block.merkle_root),
                     "block hash": ("block_hash", block.block_hash),
                     "block link": ("previous_hash", block.previous_hash)}[target]
    with triggers_lifted(conn, "ledger_block"):
        conn.execute(f"UPDATE evalledger.ledger_block SET {column} = %s WHERE block_id = %s",
                     (flip(value, where // 5, byte), block.block_id))
    return True


def test_the_probe_covers_every_type_canon_v1_writes(probe):
    """Not vacuous: the probe's columns are of every type journal_source_v1 gives a form to."""
    types = {r[0] for r in probe.execute("SELECT t.typname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
                                         "WHERE a.attrelid = 'evalledger.journal_probe'::regclass AND a.attnum > 0")}
    assert types == {"int8", "bool", "int4", "numeric", "float8", "text", "varchar", "bpchar", "uuid", "timestamptz",
                     "date", "jsonb", "_text", "_int8", "eval_decision"}
    assert set(canon.WRITERS) - {"int2", "name"} <= types  # a type given a form later is probed too (or named here)
    assert set_triggers  # the forge's catalog edit is what every tampering above goes through
    assert uuid  # uuids are drawn by st.uuids()


SPELLED = ('{"b":true,"c":"ab    ","d":"0005-03-01","e":"fail","f":0.10000000000000001,"i":-7,"ia":[7,8],"id":1,'
           '"j":{"inference_pct": 30, "speculation_pct": 5},"n":0.9500,"t":"Looks fine, \\"quoted\\"\\n",'
           '"ta":["crm","docs"],"ts":"2026-03-01T09:30:00.000000Z","u":"f68f9971-7b97-4d55-ad58-3b99a556cb64","v":"crm"}')


def test_canon_v1_is_what_docs_ledger_md_spells_whatever_the_session(probe, dsn):
    """One row of every type, written in a session whose TimeZone and DateStyle are far from UTC and
    ISO: the trigger's leaf and verify's text are docs/ledger.md's canon-v1, byte for byte."""
    from tests.ledger_forge import row_parts

    probe.execute("SET TimeZone = 'Asia/Kathmandu'")
    probe.execute("SET DateStyle = 'SQL, DMY'")
    probe.execute(INSERT, (1, True, -7, "0.9500", 0.1, 'Looks fine, "quoted"\n', "crm", "ab",
                           uuid.UUID("f68f9971-7b97-4d55-ad58-3b99a556cb64"), "2026-03-01 15:15:00+05:45", "0005-03-01",
                           Jsonb({"speculation_pct": 5, "inference_pct": 30}), ["crm", "docs"], [7, 8], "fail"))
    stored = probe.execute("SELECT rows_root FROM evalledger.ledger_journal WHERE table_name = 'journal_probe' "
                           "AND row_key = '{\"id\":1}'").fetchone()[0]
    assert stored == check.leaf_hash(SPELLED.encode("utf-8"))
    assert canon.row_text(row_parts(dsn, "journal_probe", '{"id":1}')) == SPELLED
