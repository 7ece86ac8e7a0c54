"""Proofs an auditor checks offline (check.py): one run's rows in the ledger a digest holds, and
that a newer digest's ledger extends an older one's unchanged (RFC 6962 inclusion and consistency)."""

from __future__ import annotations

import uuid

import psycopg

from evalledger.core.errors import EvalledgerError

from . import canon, check, journal
from .journal import QUERIES

# A brain-eval run's rows: the tables that hold them and the column naming the run.
RUN_TABLES = (("brain_eval_log", "eval_run_id"), ("brain_eval_question_score", "eval_run_id"),
              ("brain_eval_run_review", "eval_run_id"), ("brain_eval_review_entry", "eval_run_id"),
              ("brain_eval_suggestion_shown", "eval_run_id"), ("brain_eval_harness_run", "eval_run_id"),
              ("brain_eval_harness_answer", "eval_run_id"), ("brain_eval_judge_suggestion", "eval_run_id"),
              ("brain_eval_reference_shown", "eval_run_id"), ("brain_eval_run_closure", "eval_run_id"),
              ("legal_hold", "eval_run_id"))


def _ledger_size(blocks: list[journal.Block], ledger_id: str, digest: dict | None) -> int:
    """How many blocks the proof is against: the digest's, which must be this ledger's, or all of them."""
    if not blocks:
        raise EvalledgerError("nothing is sealed yet: run `evalledger ledger seal` (or `ledger digest`) first")
    if digest is None:
        return len(blocks)
    if digest["ledger_id"] != ledger_id:
        raise EvalledgerError(f"the digest is of ledger {digest['ledger_id']}, this database holds ledger {ledger_id}")
    size = digest["ledger_size"]
    hashes = [b.header_hash() for b in blocks[:size]]
    if size > len(blocks) or hashes[-1].hex() != digest["block_hash"] or check.merkle_root(
            [check.block_leaf(h) for h in hashes]).hex() != digest["ledger_root"]:
        raise EvalledgerError(f"this ledger no longer holds the digest's block {size}: "
                              "run `evalledger ledger verify --digest` to see what changed")
    return size


def _run_rows(conn: psycopg.Connection, shapes: dict[str, canon.Shape], run: uuid.UUID) -> list[tuple[str, list]]:
    """(table, canonical parts) of every row of the run, the analyses it used and its rubric."""
    found = [(table, shapes[table].parts(row))
             for table, column in RUN_TABLES for row in journal.rows(conn, shapes[table], column, [run])]
    if not any(table == "brain_eval_log" for table, _ in found):
        raise EvalledgerError(f"no brain-eval run {run} in this ledger (evalledger brain-eval list)")
    analyses = [r[0] for r in conn.execute(QUERIES["run_analyses"], {"run": run})]
    rubric = conn.execute(QUERIES["run_rubric"], {"run": run}).fetchone()[0]
    found += [("brain_analysis_log", shapes["brain_analysis_log"].parts(row))
              for row in journal.rows(conn, shapes["brain_analysis_log"], "analysis_id", analyses)]
    found += [("rubric", shapes["rubric"].parts(row)) for row in journal.rows(conn, shapes["rubric"], "rubric_id", [rubric])]
    return found


def _position(block: journal.Block, entry: journal.Entry, where: str) -> tuple[int, list[bytes]]:
    """The entry's index among the leaves its block sealed, and those leaves: from the block itself, never from
    counting the entries a reader may see (row-level security hides some from the auditor)."""
    leaves = block.sealed_leaves()
    try:
        return leaves.index(entry.leaf()), leaves
    except ValueError:
        raise EvalledgerError(f"{where}'s journal entry {entry.entry_id} is not what block {block.block_id} sealed: "
                              "run `evalledger ledger verify`") from None


def _sealed(his: list[int], blocks: list[journal.Block], size: int, entry: journal.Entry, where: str) -> journal.Block:
    b = journal.block_of(his, blocks, entry.txid)
    if b is None or b >= size:
        raise EvalledgerError(f"{where}'s journal entry {entry.entry_id} is not sealed in the ledger the proof is "
                              f"against: {'run `evalledger ledger seal`' if b is None else 'take a newer digest'}")
    return blocks[b]


def manifest_items(entry: journal.Entry) -> set[tuple[str, str]]:
    """(table, canonical key) of every row a MANIFEST entry names."""
    return {(item["table"], check.canonical_json(item["key"])) for item in check.parse_json(entry.key)}


def _manifest(conn: psycopg.Connection, run: uuid.UUID) -> journal.Entry:
    """The run's manifest: the MANIFEST entry its completion journalled (the newest, should there be two)."""
    item = check.canonical_json({"key": {"eval_run_id": str(run)}, "table": "brain_eval_log"})
    found = list(journal.entries(conn, "manifest_of", {"item": item}))
    if not found:
        raise EvalledgerError(f"run {run} has no manifest: it is not complete (a proof shows a whole run), or it "
                              "was completed with the journal off: run `evalledger ledger verify`")
    return found[-1]


def make(conn: psycopg.Connection, run: uuid.UUID, digest: dict | None = None) -> dict:
    """The proof that brain-eval run `run` is whole and every row of it in the ledger the digest holds (or the
    newest): each row with its journal entry and paths, and the manifest its completion journalled."""
    conn.execute(QUERIES["one_snapshot"])
    ledger_id = journal.identity(conn)
    blocks = journal.blocks(conn)
    size = _ledger_size(blocks, ledger_id, digest)
    his = [b.hi_txid for b in blocks]
    shapes = journal.shapes(conn)
    found = _run_rows(conn, shapes, run)
    keyed = [(table, shapes[table].key_text(parts), parts) for table, parts in found]
    latest: dict[tuple[str, str], tuple[journal.Entry, int]] = {}
    for entry in journal.entries(conn, "entries_of", {"tables": sorted({t for t, _, _ in keyed}),
                                                      "keys": sorted({k for _, k, _ in keyed})}):
        for i, key in enumerate(entry.row_keys()):
            latest[(entry.table, key)] = (entry, i)
    manifest = _manifest(conn, run)
    named = manifest_items(manifest)
    have = {(table, key) for table, key, _ in keyed if table not in check.AFTER_COMPLETION}
    if have != named:
        differ = sorted(have ^ named)[0]
        raise EvalledgerError(f"run {run}'s rows are not those its manifest names ({differ[0]} {differ[1]} "
                              f"{'is not in it' if differ in have else 'is gone'}): run `evalledger ledger verify`")

    rows, used = [], {}
    ledger_leaves = [check.block_leaf(b.block_hash) for b in blocks[:size]]
    for table, key, parts in keyed:
        where = f"{table} {key}"
        if (table, key) not in latest or latest[(table, key)][0].op == "DELETE":
            raise EvalledgerError(f"{where} has no journal entry: run `evalledger ledger verify`")
        entry, index = latest[(table, key)]
        text = canon.row_text(parts)
        if check.leaf_hash(text.encode("utf-8")) != entry.row_leaf(index):
            raise EvalledgerError(f"{where} differs from its journal entry {entry.entry_id}: run `evalledger ledger verify`")
        block = _sealed(his, blocks, size, entry, where)
        position, leaves = _position(block, entry, where)
        row = {"table": table, "key": check.parse_json(key), "canonical": text, "entry": entry.as_proof(),
               "block": block.block_id, "entry_index": position,
               "entry_path": [h.hex() for h in check.inclusion_path(leaves, position)]}
        if entry.rows > 1:
            row["row_index"] = index
            row["row_path"] = [h.hex() for h in check.inclusion_path(
                [entry.row_leaf(i) for i in range(entry.rows)], index)]
        rows.append(row)
        used[block.block_id] = block
    block = _sealed(his, blocks, size, manifest, f"run {run}'s manifest")
    position, leaves = _position(block, manifest, f"run {run}'s manifest")
    used[block.block_id] = block
    used[size] = blocks[size - 1]  # the digest's own block: its sealed_at and entries are checked too
    return {"schema_version": check.SCHEMA_VERSIONS["ledger_proof"], "kind": "ledger_proof", "canon": check.CANON,
            "ledger_id": ledger_id, "subject": {"suite": "brain-eval", "run": str(run)},
            "ledger": {"size": size, "root": check.merkle_root(ledger_leaves).hex()},
            "manifest": {"entry": manifest.as_proof(), "block": block.block_id, "entry_index": position,
                         "entry_path": [h.hex() for h in check.inclusion_path(leaves, position)]},
            "rows": rows,
            "blocks": [{"header": block.header(), "hash": block.block_hash.hex(),
                        "ledger_path": [h.hex() for h in check.inclusion_path(ledger_leaves, block.block_id - 1)]}
                       for _, block in sorted(used.items())]}


def consistency(conn: psycopg.Connection, first: dict, second: dict) -> tuple[dict | None, list[str], bool]:
    """The RFC 6962 consistency proof between two digests' ledger trees, from the blocks as they are now (block
    headers only: `verify` checks the entries and rows they seal); every problem checking it (none: the newer
    ledger extends the older one unchanged); and whether the digests came newer first (they are taken in
    order of size either way). A ledger rolled back below the newer digest, or forked from either, is a
    problem (exit 1), not an error."""
    conn.execute(QUERIES["one_snapshot"])
    ledger_id = journal.identity(conn)
    for digest in (first, second):
        if digest["ledger_id"] != ledger_id:
            raise EvalledgerError(f"a digest is of ledger {digest['ledger_id']}, this database holds {ledger_id}")
    swapped = first["ledger_size"] > second["ledger_size"]
    old, new = (second, first) if swapped else (first, second)
    m, n = old["ledger_size"], new["ledger_size"]
    blocks = journal.blocks(conn)
    if n > len(blocks):
        return None, [f"rolled back: this ledger holds {len(blocks)} block{'' if len(blocks) == 1 else 's'}, fewer "
                      f"than the {n} of the newer digest"], swapped
    leaves = [check.block_leaf(b.header_hash()) for b in blocks[:n]]
    proof = {"schema_version": check.SCHEMA_VERSIONS["ledger_consistency"], "kind": "ledger_consistency",
             "canon": check.CANON, "ledger_id": ledger_id,
             "old": {"size": m, "root": check.merkle_root(leaves[:m]).hex()},
             "new": {"size": n, "root": check.merkle_root(leaves).hex()},
             "proof": [h.hex() for h in check.consistency_proof(leaves, m)]}
    problems = check.check_consistency(proof, old, new)
    if problems:
        problems = [f"forked: {p}" if not p.startswith(("forked", "rolled back")) else p for p in problems]
    return proof, problems, swapped
