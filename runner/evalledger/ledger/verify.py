"""`evalledger ledger verify`: recompute every row's hash, every block and the chain, outside the database.

Every hash is recomputed here from what the database returns (canon.py, check.py), never taken from
a database function, and compared, in this order, link by link:

  rows     -> journal: each row's canon-v1 leaf against its latest journal entry; a row with no
              entry; an entry whose row is gone without a purge that explains it; a DELETE no
              purge explains
  journal  -> blocks:  each entry's leaf against the leaves its block sealed, each block's root
  blocks   -> chain:   each header's hash, each block's link to the one before, the ledger root
  chain    -> digests: each digest's block hash and ledger root, recomputed
  runs     -> manifests: each completed brain-eval run's rows against the manifest its completion
              journalled, both ways (manifests.py)
  --recompute:         every computed column of every completed run against its suite's decision

All of it in one snapshot (REPEATABLE READ, READ ONLY), so writers at work never show as tampering.
"""

from __future__ import annotations

import collections
import json
import time
from dataclasses import dataclass, field

import psycopg

from . import canon, check, code, journal, manifests, package, policy, recompute as recomputing
from .journal import QUERIES


@dataclass(frozen=True)
class Finding:
    """One thing that does not check: kind, where (table and key, or block), what."""

    kind: str
    detail: str
    table: str | None = None
    key: str | None = None
    columns: tuple[str, ...] = ()
    block: int | None = None
    entry: int | None = None

    def line(self) -> str:
        """The one line verify prints for it."""
        where = f"{self.table} {self.key}: " if self.table and self.key else f"{self.table}: " if self.table else ""
        return f"{self.kind}: {where}{self.detail}"

    def as_json(self) -> dict:
        return {"kind": self.kind, "table": self.table, "key": check.parse_json(self.key) if self.key else None,
                "columns": list(self.columns), "block": self.block, "entry": self.entry, "detail": self.detail}


@dataclass
class Report:
    """What verify checked and found."""

    ledger_id: str
    findings: list[Finding] = field(default_factory=list)
    rows: int = 0
    entries: int = 0
    blocks: int = 0
    digests: int = 0
    unsealed: int = 0
    recomputed: bool = False
    seconds: float = 0.0
    code_fingerprint: str | None = None

    @property
    def verified(self) -> bool:
        return not self.findings


@dataclass
class _Latest:
    """A row's latest journal entry: which, what it did, the row's leaf, fingerprints, its transaction."""

    entry: int
    op: str
    leaf: bytes
    fingerprints: list[int] | None
    txid: int


def verify(conn: psycopg.Connection, digests: list[tuple[str, dict]], recompute: bool = False,
           own_snapshot: bool = True) -> Report:
    """Check the ledger conn reads (as a role that reads every ledger table) against digests: in a
    read-only snapshot of its own, or (own_snapshot False) in conn's transaction as it stands."""
    started = time.perf_counter()
    if recompute:  # the package's decision functions, in this session's pg_temp (before the read-only snapshot)
        recomputing.install(conn)
        if own_snapshot:
            conn.commit()
    if own_snapshot:
        conn.execute(QUERIES["one_snapshot"])
    report = Report(journal.identity(conn))
    blocks = journal.blocks(conn)
    his = [b.hi_txid for b in blocks]
    sealed: list[list[journal.Entry]] = [[] for _ in blocks]
    latest: dict[str, dict[str, _Latest]] = collections.defaultdict(dict)
    deleted: collections.Counter = collections.Counter()
    findings = report.findings
    shapes = journal.shapes(conn, _tables_checked(conn, findings))
    facts = policy.Facts()
    runs = manifests.Runs()

    for entry in journal.entries(conn):
        report.entries += 1
        damage = _shape_of(entry)
        if damage:
            findings.append(Finding("entry_damaged", f"journal entry {entry.entry_id} {damage}", entry.table,
                                    entry=entry.entry_id))
        where = journal.block_of(his, blocks, entry.txid)
        if where is None:
            report.unsealed += 1
        else:
            sealed[where].append(entry)
        if entry.op == "MANIFEST":  # names a run's rows; it is no row version of its own
            damage, texts = _manifest_damage(entry)
            if damage:
                findings.append(Finding("entry_damaged", f"journal entry {entry.entry_id} (a run's manifest) {damage}",
                                        entry.table, entry=entry.entry_id))
            else:
                runs.manifest(entry.entry_id, entry.txid, texts)
            continue
        try:
            keys = entry.row_keys()
        except (ValueError, check.NotCanonical) as exc:
            findings.append(Finding("entry_damaged", f"journal entry {entry.entry_id}'s key is not canonical JSON: {exc}",
                                    entry.table, entry.key, entry=entry.entry_id))
            continue
        if entry.rows > 1 and (len(keys) != entry.rows or check.merkle_root(
                [entry.row_leaf(i) for i in range(entry.rows)]) != entry.rows_root):
            findings.append(Finding("entry_damaged", f"journal entry {entry.entry_id}'s row leaves do not make its rows_root",
                                    entry.table, entry=entry.entry_id))
        seen = policy.Seen(entry.entry_id, entry.op, entry.txid, policy.stamp(str(entry.recorded_at)))
        for i, key in enumerate(keys):
            before = latest[entry.table].get(key)
            changed = None
            if entry.op == "UPDATE" and before is not None and entry.table in shapes:
                changed = _fingerprints_differ(shapes[entry.table], before.fingerprints, entry.fingerprints)
            facts.saw(entry.table, key, seen, before, changed)
            latest[entry.table][key] = _Latest(entry.entry_id, entry.op, entry.row_leaf(i), entry.fingerprints, entry.txid)
        if entry.op == "DELETE":
            deleted[(entry.txid, entry.table)] += entry.rows

    _check_blocks(blocks, sealed, findings)
    report.blocks = len(blocks)
    for path, digest in digests:
        _check_digest(path, digest, report, blocks, findings)
        report.digests += 1
    if any("code" in digest for _, digest in digests):
        now = code.definitions(conn)
        report.code_fingerprint = code.fingerprint(now)
        for path, digest in digests:
            if "code" in digest:
                _check_code(path, digest, now, findings)

    purges = collections.Counter()
    dropped: dict[str, policy.Seen | None] = {}
    for purge_log_id, txid, table, count, partition in conn.execute(QUERIES["purges"]):
        purges[(txid, table)] += count
        if partition:
            dropped[partition] = facts.first.get(("retention_purge_log", check.canonical_json(
                {"purge_log_id": purge_log_id})))
    question_runs = {check.canonical_json({"question_score_id": q if isinstance(q, int) else str(q)}): str(run)
                     for q, run in conn.execute(QUERIES["question_runs"])}
    holds = {h: policy.Hold(h, str(run) if run else None, target, held_from, held_to)
             for h, run, target, held_from, held_to in conn.execute(QUERIES["holds"])}
    retention = policy.Retention(facts, holds, question_runs)
    for table in sorted(shapes):
        _check_rows(conn, shapes[table], latest.pop(table, {}), deleted, purges, dropped, retention, runs, report)
    for kind, table, key, entry, detail in retention.findings():
        findings.append(Finding(kind, detail, table, key, entry=entry))
    for kind, table, key, entry, detail in runs.findings(facts.first):
        findings.append(Finding(kind, detail, table, key, entry=entry))
    for table, key, entry, columns, why in policy.update_findings(facts, question_runs):
        named = ", ".join(columns) if columns else "a column"
        findings.append(Finding("update_refused", f"{named} changed by journal entry {entry} (UPDATE), which the "
                                                  f"ledger's rules never allow: {why}", table, key, columns, entry=entry))
    for table, left in latest.items():
        findings.extend(Finding("row_gone", f"journal entry {s.entry} is of a table the ledger no longer has", table, key,
                                entry=s.entry) for key, s in left.items())
    if recompute:
        for table, key, column, stored, recomputed in conn.execute(QUERIES["recompute_package"]):
            missing = stored is None and column in json.loads(key)  # its key column: the row is not there
            findings.append(Finding("recomputed", "no row, where its completed run's inputs derive one" if missing
                                    else f"{column} is {stored}, but its inputs decide {recomputed}",
                                    table, key, (column,)))
        report.recomputed = True
    if own_snapshot:
        conn.rollback()
    report.seconds = time.perf_counter() - started
    return report


def _tables_checked(conn, findings: list[Finding]) -> list[str]:
    """The tables whose rows verify checks: the package's journalled tables and every other table of the ledger's
    schema the package does not exempt. The catalog is checked against the package on the way: a package table
    missing, a table the package does not install, a primary key not the package's, a journal trigger missing,
    disabled or pointed elsewhere (each a finding)."""
    installed = package.tables()
    catalog = {table: frozenset(key) for table, key in conn.execute(QUERIES["catalog_tables"])}
    for table in sorted(set(installed) - set(catalog)):
        findings.append(Finding("table_missing", "is a table the package installs, and the database does not have it",
                                table))
    for table in sorted(set(catalog) - set(installed)):
        findings.append(Finding("table_unknown", "is a table of the ledger's schema the package does not install",
                                table))
    for table in sorted(set(catalog) & set(installed)):
        if catalog[table] != installed[table]:
            findings.append(Finding("key_changed", f"has the primary key ({', '.join(sorted(catalog[table]))}), the "
                                                   f"package's is ({', '.join(sorted(installed[table]))})", table))
    checked = sorted(t for t in set(catalog) | set(installed) if t not in package.EXEMPT)
    triggers = {(t, name): rest for t, name, *rest in conn.execute(QUERIES["catalog_triggers"])}
    for table in checked:
        if table not in catalog:
            continue
        for name, (function, events, per_row) in package.journal_triggers(table).items():
            found = triggers.get((table, name))
            if found is None:
                problem = f"has no journal trigger {name}"
            elif found[1] != function or f" AFTER {events} ON " not in found[2] or (
                    " FOR EACH ROW " in found[2]) != per_row:
                problem = (f"has a journal trigger {name} that is not AFTER {events} FOR EACH "
                           f"{'ROW' if per_row else 'STATEMENT'} EXECUTE FUNCTION {function}()")
            elif found[0] != "A":
                problem = f"has its journal trigger {name} not ENABLE ALWAYS (tgenabled {found[0]!r})"
            else:
                continue
            findings.append(Finding("journal_trigger", problem, table))
    return checked


OPERATIONS = {"BASELINE", "INSERT", "UPDATE", "DELETE", "MANIFEST"}


def _shape_of(entry: journal.Entry) -> str | None:
    """What is wrong with an entry's shape (the journal carries no CHECK constraints: verify checks here)."""
    if entry.canon != check.CANON:
        return f"names canon {entry.canon!r}, not {check.CANON}"
    if entry.op not in OPERATIONS:
        return f"has operation {entry.op!r}"
    if len(entry.rows_root) != 32:
        return "has a rows_root that is not a SHA-256"
    if entry.rows < 1 or (entry.rows == 1) != (entry.row_leaves is None) or (
            entry.rows > 1 and len(entry.row_leaves) != 32 * entry.rows):
        return f"covers {entry.rows} rows with {len(entry.row_leaves or b'') // 32} row leaves"
    return None


def _manifest_damage(entry: journal.Entry) -> tuple[str | None, list[str]]:
    """What is wrong with a run's manifest entry (its items must be {"key","table"} objects in bytewise order,
    each once, whose leaves are the ones kept and make its root), and its items' canonical texts."""
    try:
        items = check.parse_json(entry.key)
        texts = [check.canonical_json(item) for item in items] if isinstance(items, list) else []
    except (ValueError, check.NotCanonical):
        return "has a key that is not canonical JSON", []
    if len(texts) != entry.rows or entry.rows < 2 or any(
            not isinstance(item, dict) or set(item) != {"key", "table"} or not isinstance(item["table"], str)
            for item in items):
        return "does not list as many {key, table} items as it covers", texts
    if any(a.encode("utf-8") >= b.encode("utf-8") for a, b in zip(texts, texts[1:])):
        return "lists its items out of bytewise order", texts
    leaves = [check.leaf_hash(t.encode("utf-8")) for t in texts]
    if b"".join(leaves) != (entry.row_leaves or b"") or check.merkle_root(leaves) != entry.rows_root:
        return "has items that do not make its leaves and root", texts
    return None, texts


def _check_blocks(blocks: list[journal.Block], sealed: list[list[journal.Entry]], findings: list[Finding]) -> None:
    """Each block against the entries in its range, its own header, the block before, the ledger tree."""
    previous = bytes(32)
    ledger: list[bytes] = []
    for n, (block, entries) in enumerate(zip(blocks, sealed)):
        b = block.block_id
        if b != n + 1:
            findings.append(Finding("block_missing", f"block {b} follows block {n}: a block is missing", block=b))
        if n and block.lo_txid != blocks[n - 1].hi_txid:
            findings.append(Finding("block_range", f"block {b} starts at transaction {block.lo_txid}, not where block "
                                                   f"{blocks[n - 1].block_id} ends ({blocks[n - 1].hi_txid})", block=b))
        stored = block.sealed_leaves()
        got = [e.leaf() for e in entries]
        if got != stored:
            findings.extend(_leaf_differences(b, entries, got, stored))
        if check.merkle_root(stored) != block.merkle_root:
            findings.append(Finding("block_root", f"block {b}'s Merkle root is not the tree of the leaves it sealed", block=b))
        recomputed = block.header_hash()
        if recomputed != block.block_hash:
            findings.append(Finding("block_hash", f"block {b}'s header hashes to {recomputed.hex()}, not to its block hash "
                                                  f"{block.block_hash.hex()}", block=b))
        if block.previous_hash != previous:
            findings.append(Finding("chain_broken", f"block {b} names {block.previous_hash.hex()} as the block before, "
                                                    f"whose hash is {previous.hex()}", block=b))
        previous = recomputed
        ledger.append(check.block_leaf(recomputed))
        if check.merkle_root(ledger) != block.ledger_root:
            findings.append(Finding("ledger_root", f"block {b}'s ledger root is not the tree of the block hashes up to it",
                                    block=b))


def _leaf_differences(b: int, entries: list[journal.Entry], got: list[bytes], stored: list[bytes]) -> list[Finding]:
    """Which entries of block b differ from what it sealed, by position when none came or went."""
    if len(got) == len(stored):
        return [Finding("entry_changed", f"journal entry {e.entry_id} ({e.op}) is not the entry block {b} sealed "
                                         f"at position {i}", e.table, e.key, block=b, entry=e.entry_id)
                for i, (e, mine, theirs) in enumerate(zip(entries, got, stored)) if mine != theirs]
    kept = set(stored)
    found = [Finding("entry_changed", f"journal entry {e.entry_id} ({e.op}) lies in block {b}'s transactions but is not "
                                      "an entry it sealed", e.table, e.key, block=b, entry=e.entry_id)
             for e, leaf in zip(entries, got) if leaf not in kept]
    present = {leaf: e for e, leaf in zip(entries, got)}
    gone = [i for i, leaf in enumerate(stored) if leaf not in present]
    if gone:  # the block keeps each entry's leaf, not the entry: named by its place, after the entry before it
        where = ", ".join(f"{i}" + (f" (after journal entry {present[stored[i - 1]].entry_id})"
                                    if i and stored[i - 1] in present else "") for i in gone[:10])
        found.append(Finding("entry_gone", f"block {b} sealed {len(gone)} entr{'y' if len(gone) == 1 else 'ies'} the "
                                           f"journal no longer has, at position{'' if len(gone) == 1 else 's'} {where}"
                                           f"{', ...' if len(gone) > 10 else ''}", block=b))
    return found


def _check_digest(path: str, digest: dict, report: Report, blocks: list[journal.Block], findings: list[Finding]) -> None:
    """A digest kept outside against the blocks recomputed now."""
    problems = check.check_digest(digest)
    if problems:
        findings.append(Finding("digest_unreadable", f"{path}: {problems[0]}"))
        return
    if digest["ledger_id"] != report.ledger_id:
        findings.append(Finding("digest_other_ledger", f"{path} is a digest of ledger {digest['ledger_id']}, not of this "
                                                       f"one ({report.ledger_id})"))
        return
    size = digest["ledger_size"]
    if not 1 <= size <= len(blocks) or blocks[size - 1].block_id != size:
        findings.append(Finding("digest_block_gone", f"{path} holds block {size}, which this ledger does not have "
                                                     f"(it has {len(blocks)})", block=size))
        return
    hashes = [b.header_hash() for b in blocks[:size]]
    if hashes[-1].hex() != digest["block_hash"]:
        findings.append(Finding("digest_mismatch", f"block {size} hashes to {hashes[-1].hex()}, but {path} holds "
                                                   f"{digest['block_hash']}: the block (or one before it) was rewritten",
                                block=size))
    if check.merkle_root([check.block_leaf(h) for h in hashes]).hex() != digest["ledger_root"]:
        findings.append(Finding("digest_mismatch", f"the ledger tree of blocks 1-{size} is not the one {path} holds: "
                                                   "a block up to it was rewritten", block=size))
    # Every other field it holds is checked too: when its block was sealed, and how many entries blocks 1-N cover.
    if str(blocks[size - 1].sealed_at) != digest["sealed_at"]:
        findings.append(Finding("digest_mismatch", f"block {size} was sealed at {blocks[size - 1].sealed_at}, but {path} "
                                                   f"says {digest['sealed_at']}", block=size))
    covered = sum(b.entry_count for b in blocks[:size])
    if covered != digest["entries"]:
        findings.append(Finding("digest_mismatch", f"blocks 1-{size} seal {covered} entries, but {path} says "
                                                   f"{digest['entries']}", block=size))


def _check_code(path: str, digest: dict, now: dict[str, str], findings: list[Finding]) -> None:
    """The ledger's code now against the code a digest pinned: each definition changed, added or removed, by name."""
    if check.check_digest(digest):
        return  # a code not the one its fingerprint pins, or malformed: _check_digest named it
    for name, what in code.changes(digest["code"], now):
        findings.append(Finding("code_changed", f"{name} was {what} since {path} was taken"))


def _check_rows(conn, shape: canon.Shape, latest: dict[str, _Latest], deleted, purges, dropped,
                retention: policy.Retention, runs: manifests.Runs, report: Report) -> None:
    """One table's rows against their latest journal entries; then the entries whose rows are gone."""
    findings = report.findings
    changed = []
    for row in journal.rows(conn, shape):
        report.rows += 1
        try:
            parts = shape.parts(row)
        except check.NotCanonical as exc:
            findings.append(Finding("unwritable", f"holds a value canon-v1 has no form for: {exc}", shape.table))
            continue
        key = shape.key_text(parts)
        runs.row(shape, parts, key)
        mine = latest.pop(key, None)
        if mine is None:
            findings.append(Finding("row_unjournalled", "has no journal entry: written with the journal's trigger off",
                                    shape.table, key))
        elif mine.op == "DELETE":
            findings.append(Finding("row_resurrected", f"is present, but journal entry {mine.entry} deleted it",
                                    shape.table, key, entry=mine.entry))
        elif check.leaf_hash(canon.row_text(parts).encode("utf-8")) != mine.leaf:
            changed.append((key, parts, mine))
    for key, parts, mine in changed:
        columns = _changed_columns(conn, shape, parts, mine.fingerprints)
        named = f"{', '.join(columns)} differ{'s' if len(columns) == 1 else ''}" if columns else "differs"
        findings.append(Finding("row_changed", f"{named} from journal entry {mine.entry} ({mine.op})",
                                shape.table, key, tuple(columns), entry=mine.entry))
    explained = collections.Counter()
    for key, mine in latest.items():
        if mine.op == "DELETE":
            explained[(mine.txid, shape.table)] += 1
            continue
        if shape.table == "eval_candidates" and _partition_of(key) in dropped:
            why = retention.partition_dropped(_partition_of(key)[-6:], dropped[_partition_of(key)],
                                              retention.facts.first.get((shape.table, key)))
            if why:
                findings.append(Finding("deleted_too_young", f"is gone: {why}", shape.table, key, entry=mine.entry))
            continue
        findings.append(Finding("row_gone", f"is gone, with no journal entry or purge that deleted it "
                                            f"(last entry {mine.entry}, {mine.op})", shape.table, key, entry=mine.entry))
    for (txid, table), count in explained.items():
        if not _purged(txid, table, deleted[(txid, table)], purges):
            findings.extend(Finding("deleted_outside_purge", f"was deleted by transaction {txid} (journal entry {m.entry}), "
                                                             "which no retention purge log explains", table, key, entry=m.entry)
                            for key, m in latest.items() if m.op == "DELETE" and m.txid == txid)


# The ledger's ON DELETE CASCADE children, each with the parent whose purge deletes them (the purge
# log counts the parent's rows only). Written here, not read from the catalog, so a cascade a
# superuser adds explains nothing; test_journal.py holds it equal to the catalog's foreign keys.
CASCADES = {"legal_hold_release": "legal_hold", "brain_eval_reference_shown": "brain_eval_question_score"}


def _purged(txid: int, table: str, count: int, purges) -> bool:
    """Whether the purge log explains count rows of table deleted by transaction txid."""
    if table in CASCADES:
        return purges[(txid, CASCADES[table])] > 0
    return purges[(txid, table)] == count


def _partition_of(key: str) -> str:
    stamp = check.parse_json(key)["created_at"]
    return f"eval_candidates_p{stamp[:4]}{stamp[5:7]}"


def _fingerprints_differ(shape: canon.Shape, before: list[int | None] | None,
                         after: list[int | None] | None) -> list[str] | None:
    """The columns whose fingerprint differs between two entries of one row (None when either has none, or the
    table's columns changed between them)."""
    if before is None or after is None or len(before) != len(after) or len(after) != len(shape.columns):
        return None
    return [name for name, was, is_ in zip(shape.columns, before, after) if was != is_]


def _changed_columns(conn, shape: canon.Shape, parts: list[str | None], stored: list[int | None] | None) -> list[str]:
    """The columns whose canonical part's fingerprint is not the entry's (the entry's own hash is the proof; these
    only name what changed). By position while the table has the columns it had; else by what no longer matches."""
    if stored is None:
        return []
    now = conn.execute(QUERIES["fingerprints"], {"parts": parts}).fetchone()[0]
    if len(stored) == len(now):
        return [name for name, was, is_ in zip(shape.columns, stored, now) if was != is_]
    left = collections.Counter(fp for fp in stored if fp is not None)
    named = []
    for name, fp in zip(shape.columns, now):
        if fp is None:
            continue
        if left[fp]:
            left[fp] -= 1
        else:
            named.append(name)
    return named
