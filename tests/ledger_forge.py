"""A superuser's tampering, as the journal's tests try it: the triggers lifted through pg_trigger (no DDL,
so no event trigger sees it), then rows, their journal entries and the blocks rewritten to match, with
evalledger's own canon-v1 and Merkle code, so the forgery is as good as a careful insider's."""

from __future__ import annotations

import contextlib

import psycopg
from psycopg import sql

from evalledger.ledger import canon, check, journal, verify


def set_triggers(admin, tables: list[str], state: str, only: str = "%", but: str = "") -> None:
    """tgenabled of the user triggers of tables (named LIKE only, and NOT LIKE but) edited in the catalog;
    the tables' pg_class rows touched too, which makes every session (this one included) reload them."""
    names = [f"evalledger.{t}" for t in tables]
    admin.execute("UPDATE pg_catalog.pg_trigger SET tgenabled = %s WHERE tgrelid = ANY(%s::regclass[]) "
                  "AND NOT tgisinternal AND tgname LIKE %s AND tgname NOT LIKE %s", (state, names, only, but))
    admin.execute("UPDATE pg_catalog.pg_class SET relhastriggers = true WHERE oid = ANY(%s::regclass[])", (names,))


@contextlib.contextmanager
def triggers_lifted(admin, *tables: str, only: str = "%"):
    """The user triggers of tables (named LIKE only) disabled by editing the catalog (tgenabled = 'D'),
    then ALWAYS again: no DDL, so no event trigger sees it."""
    set_triggers(admin, list(tables), "D", only)
    try:
        yield
    finally:
        set_triggers(admin, list(tables), "A", only)


def reading(dsn: str) -> psycopg.Connection:
    """A superuser connection set up as verify reads (canon-v1's session)."""
    conn = psycopg.connect(dsn)
    journal.prepare(conn)
    conn.commit()
    return conn


def verified(dsn: str, digests=(), recompute=False) -> verify.Report:
    """verify over the database at dsn, as the superuser, against digests [(name, digest)]."""
    with reading(dsn) as conn:
        return verify.verify(conn, list(digests), recompute=recompute)


def kinds(report: verify.Report) -> list[tuple]:
    """(kind, table, key, columns) of every finding, in order."""
    return [(f.kind, f.table, f.key, f.columns) for f in report.findings]


def latest_entry(admin, table: str, key: str) -> int:
    """The id of the newest journal entry of table's row with this canonical key."""
    return admin.execute("SELECT max(entry_id) FROM evalledger.ledger_journal WHERE table_name = %s AND row_key = %s",
                         (table, key)).fetchone()[0]


def row_parts(dsn: str, table: str, key: str) -> list:
    """The canon-v1 parts of table's row with this key, computed here as verify computes them."""
    with reading(dsn) as conn:
        shape = journal.shapes(conn)[table]
        for row in journal.rows(conn, shape):
            parts = shape.parts(row)
            if shape.key_text(parts) == key:
                return parts
    raise LookupError(f"no row {key} in {table}")


def rejournal(admin, dsn: str, table: str, key: str) -> int:
    """Rewrite the row's newest journal entry to match the row as it is now; the entry's id."""
    parts = row_parts(dsn, table, key)
    entry = latest_entry(admin, table, key)
    leaf = check.leaf_hash(canon.row_text(parts).encode("utf-8"))
    with triggers_lifted(admin, "ledger_journal"):
        admin.execute("UPDATE evalledger.ledger_journal SET rows_root = %s, "
                      "column_fingerprints = ARRAY(SELECT hashtext(p) FROM unnest(%s::text[]) p) WHERE entry_id = %s",
                      (leaf, [p for p in parts if p is not None], entry))
    return entry


def reseal(admin, dsn: str, first_block: int) -> None:
    """Rewrite block first_block and every block after it from the journal as it is now: leaves, roots, the
    chain and the ledger roots all consistent, as a superuser covering a rewritten entry would."""
    with reading(dsn) as conn:
        blocks = journal.blocks(conn)
        his = [b.hi_txid for b in blocks]
        members: dict[int, list[bytes]] = {b.block_id: [] for b in blocks}
        for entry in journal.entries(conn):
            where = journal.block_of(his, blocks, entry.txid)
            if where is not None:
                members[blocks[where].block_id].append(entry.leaf())
        conn.rollback()
    previous = blocks[first_block - 2].block_hash if first_block > 1 else bytes(32)
    ledger = [check.block_leaf(b.block_hash) for b in blocks[:first_block - 1]]
    with triggers_lifted(admin, "ledger_block"):
        for block in blocks[first_block - 1:]:
            leaves = members[block.block_id]
            block.leaves = b"".join(leaves)
            block.entry_count = len(leaves)
            block.merkle_root = check.merkle_root(leaves)
            block.previous_hash = previous
            block.block_hash = block.header_hash()
            ledger.append(check.block_leaf(block.block_hash))
            admin.execute("UPDATE evalledger.ledger_block SET leaves = %s, entry_count = %s, merkle_root = %s, "
                          "previous_hash = %s, block_hash = %s, ledger_root = %s WHERE block_id = %s",
                          (block.leaves, block.entry_count, block.merkle_root, block.previous_hash, block.block_hash,
                           check.merkle_root(ledger), block.block_id))
            previous = block.block_hash


def rewrite(admin, table: str, assignments: str, where: str, params=()) -> None:
    """UPDATE table (its triggers lifted through the catalog) SET assignments WHERE where."""
    with triggers_lifted(admin, table):
        admin.execute(sql.SQL("UPDATE evalledger.{} SET ").format(sql.Identifier(table))
                      + sql.SQL(assignments + " WHERE " + where), params)


def seal(admin, wait_seconds: float = 5) -> dict:
    """ledger_seal_v1 as the owner would run it, committed."""
    from evalledger.ledger import digest

    return digest.seal(admin, wait_seconds)


def take_digest(admin) -> dict:
    """A digest of the newest block, sealed first."""
    from evalledger.ledger import digest

    return digest.take(admin, "test")[0]


def age_unsealed(admin, interval: str) -> None:
    """Every journal entry not sealed yet recorded `interval` earlier (an SQL interval), as if the rows they
    journal had been written then: how tests make history old enough for the retention policy verify checks.
    Done before the seal that covers them, so the blocks hold the older times."""
    with triggers_lifted(admin, "ledger_journal"):
        admin.execute("UPDATE evalledger.ledger_journal SET recorded_at = recorded_at - %s::interval "
                      "WHERE txid >= coalesce((SELECT max(hi_txid) FROM evalledger.ledger_block), 0)", (interval,))


def age_entries_after(admin, entry_id: int, interval: str) -> None:
    """The journal entries after entry_id (not sealed yet) recorded `interval` earlier: rows a test wrote with a
    tier clock long past, journalled as if written then (verify ages every deletion by the journal's times)."""
    with triggers_lifted(admin, "ledger_journal"):
        admin.execute("UPDATE evalledger.ledger_journal SET recorded_at = recorded_at - %s::interval "
                      "WHERE entry_id > %s", (interval, entry_id))
