"""Check an evalledger proof offline, with Python's standard library and nothing else.

    python -m evalledger.ledger.check proof.json digest.json
    python -m evalledger.ledger.check consistency.json old-digest.json new-digest.json
    python -m evalledger.ledger.check --allowed-signers FILE digest.json [...]
    python -m evalledger.ledger.check --code old-digest.json new-digest.json

With --allowed-signers (OpenSSH's allowed_signers format), every digest given must also carry an
SSH signature beside it (digest.json.sig, made by `evalledger ledger digest --sign KEY`), which
ssh-keygen verifies: OpenSSH is the one thing this check runs besides Python.

With --code, the two digests' code fingerprints are compared: each definition of the ledger's code
changed, added or removed between them is named (a migration changes some; nothing else should).

Exit 0 when everything checks, 1 when something does not (one line per problem, naming the row,
the path or the block), 3 when a file cannot be read. This module imports only the standard
library, so an auditor can copy this one file anywhere and run it; docs/ledger.md writes out the
same algorithm step by step, to be re-implemented without it. The rest of evalledger imports its
hashing from here: one definition of canon-v1's JSON and of RFC 6962's trees.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from decimal import Decimal
from json.encoder import encode_basestring

CANON = "canon-v1"
EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 3
ZERO_HASH = "0" * 64


# -- canon-v1's JSON -------------------------------------------------------------------------------


class NotCanonical(ValueError):
    """A value or text that canon-v1 has no form for, or writes otherwise."""


def canonical_json(value) -> str:
    """canon-v1's JSON text of a value: object keys in code-point order, no whitespace, strings
    escaped as JSON requires and nothing more (non-ASCII stays as it is), integers and Decimals
    as their exact decimal text (no exponent, a Decimal's scale kept), true, false, null."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return decimal_text(value)
    if isinstance(value, str):
        return encode_basestring(value)
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise NotCanonical("an object key is not a string")
        return "{" + ",".join(f"{encode_basestring(k)}:{canonical_json(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    raise NotCanonical(f"canon-v1 has no form for a {type(value).__name__}")


def decimal_text(number: Decimal) -> str:
    """A finite Decimal as PostgreSQL's numeric writes it: plain digits, its scale kept, no sign on zero."""
    if not number.is_finite():
        raise NotCanonical(f"{number} is not a finite number")
    text = format(number, "f")
    return text[1:] if number.is_zero() and text.startswith("-") else text


def _refuse_constant(name: str):
    raise NotCanonical(f"{name} is not a JSON number")


def _unique_keys(pairs):
    found = {}
    for key, value in pairs:
        if key in found:
            raise NotCanonical(f"key {key!r} appears twice")
        found[key] = value
    return found


def parse_json(text: str):
    """JSON text as values canon-v1 writes back exactly: numbers with a fraction as Decimal."""
    return json.loads(text, parse_float=Decimal, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)


class MisshapenDigest(ValueError):
    """A digest file's text that is JSON but not a digest; the message is its first problem."""


def parse_digest(text: str) -> dict:
    """A digest file's text as every reader reads one: parsed as parse_json does (a key given twice is
    refused, not read as its last value), then checked for its shape (MisshapenDigest)."""
    digest = parse_json(text)
    problems = check_digest(digest) if isinstance(digest, dict) else ["not a JSON object"]
    if problems:
        raise MisshapenDigest(problems[0])
    return digest


def check_canonical(text: str):
    """The value of text, which must be canon-v1's JSON exactly (else NotCanonical)."""
    try:
        value = parse_json(text)
    except json.JSONDecodeError as exc:
        raise NotCanonical(f"not JSON: {exc.msg} at character {exc.pos}") from None
    if canonical_json(value) != text:
        raise NotCanonical("not in canon-v1 form (key order, whitespace, escapes or number spelling)")
    return value


# -- RFC 6962's Merkle trees ----------------------------------------------------------------------


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def leaf_hash(data: bytes) -> bytes:
    """RFC 6962 leaf: SHA-256(0x00 || data)."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node: SHA-256(0x01 || left || right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than n (n > 1): RFC 6962's split point."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def merkle_root(leaves: list[bytes]) -> bytes:
    """The Merkle tree hash of leaf hashes given in order (RFC 6962 MTH; the empty tree hashes nothing)."""
    if not leaves:
        return sha256(b"")
    level = list(leaves)
    while len(level) > 1:
        # Pairing neighbours and carrying an odd last node up is RFC 6962's split, level by level.
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def inclusion_path(leaves: list[bytes], index: int) -> list[bytes]:
    """RFC 6962 PATH(index, D[n]): the sibling hashes from the leaf up to the root."""
    if len(leaves) <= 1:
        return []
    k = _split(len(leaves))
    if index < k:
        return inclusion_path(leaves[:k], index) + [merkle_root(leaves[k:])]
    return inclusion_path(leaves[k:], index - k) + [merkle_root(leaves[:k])]


def root_from_path(leaf: bytes, index: int, size: int, path: list[bytes]) -> bytes | None:
    """The root an inclusion path leads to (RFC 9162, 2.1.3.2), or None when the path cannot be one
    of a tree of that size."""
    if not 0 <= index < size:
        return None
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return None
        if fn % 2 == 1 or fn == sn:
            r = node_hash(p, r)
            if fn % 2 == 0:
                while fn % 2 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return r if sn == 0 else None


def consistency_proof(leaves: list[bytes], old_size: int) -> list[bytes]:
    """RFC 6962 PROOF(m, D[n]): what shows the tree of the first old_size leaves is a prefix of this one."""
    def subproof(m: int, d: list[bytes], complete: bool) -> list[bytes]:
        n = len(d)
        if m == n:
            return [] if complete else [merkle_root(d)]
        k = _split(n)
        if m <= k:
            return subproof(m, d[:k], complete) + [merkle_root(d[k:])]
        return subproof(m - k, d[k:], False) + [merkle_root(d[:k])]

    if not 0 < old_size <= len(leaves):
        raise ValueError("the old tree must have between 1 and all of the new tree's leaves")
    return subproof(old_size, leaves, True)


def consistent(old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: list[bytes]) -> bool:
    """Whether proof shows the tree (old_size, old_root) is a prefix of (new_size, new_root) (RFC 9162, 2.1.4.2)."""
    if not 0 < old_size <= new_size:
        return False
    if old_size == new_size:
        return not proof and old_root == new_root
    if not proof:
        return False
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # a power of two: the old root is the proof's first node
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root


# -- the journal's entries and blocks, as canon-v1 writes them --------------------------------------

ENTRY_FIELDS = ("canon", "entry", "key", "op", "recorded_at", "rows", "rows_root", "table")
BLOCK_FIELDS = ("block", "canon", "entries", "first_entry", "hi_txid", "last_entry", "lo_txid", "previous",
                "root", "sealed_at", "sealed_by")


def entry_text(entry: dict) -> str:
    """A journal entry's canonical bytes (as text): the data of its leaf in its block's tree."""
    return canonical_json({field: entry[field] for field in ENTRY_FIELDS})


def entry_text_of(canon: str, entry_id: int, key_text: str, op: str, recorded_at: str, rows: int,
                  rows_root_hex: str, table: str) -> str:
    """entry_text from the stored fields, the key as its stored canonical text (what the seal hashes)."""
    return (f'{{"canon":{encode_basestring(canon)},"entry":{entry_id},"key":{key_text},"op":{encode_basestring(op)},'
            f'"recorded_at":"{recorded_at}","rows":{rows},"rows_root":"{rows_root_hex}","table":{encode_basestring(table)}}}')


def block_text(header: dict) -> str:
    """A block header's canonical bytes (as text): its hash is the block's hash."""
    return canonical_json({field: header[field] for field in BLOCK_FIELDS})


def block_leaf(block_hash: bytes) -> bytes:
    """A block's leaf in the ledger tree: SHA-256(0x00 || its 32-byte hash)."""
    return leaf_hash(block_hash)


# -- checking a proof ------------------------------------------------------------------------------

# Each file's schema_version this checker knows; any other is refused, not guessed at.
SCHEMA_VERSIONS = {"ledger_digest": 1, "ledger_proof": 2, "ledger_consistency": 1}
# The namespace of a digest's SSH signature (ssh-keygen -Y sign -n ...): a signature made for any
# other purpose with the same key does not verify as a digest's.
SIGNATURE_NAMESPACE = "evalledger-ledger-digest"
# Rows a proof may show beside its run's manifest: a legal hold is placed and released after completion.
AFTER_COMPLETION = ("legal_hold",)
ROW_OPERATIONS = ("BASELINE", "INSERT", "UPDATE")

_HEX = re.compile(r"[0-9a-f]{64}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")


def _hex(value, what: str) -> bytes:
    """A hash as canon-v1 writes it: 64 lowercase hex digits (uppercase is refused: one spelling only)."""
    if not isinstance(value, str) or not _HEX.fullmatch(value):
        raise NotCanonical(f"{what} is not a SHA-256 in 64 lowercase hex digits")
    return bytes.fromhex(value)


def _path(values, what: str) -> list[bytes]:
    if not isinstance(values, list):
        raise NotCanonical(f"{what} is not a list of hashes")
    return [_hex(v, f"{what}[{i}]") for i, v in enumerate(values)]


def _count(value, what: str, least: int = 0) -> int:
    if type(value) is not int or value < least:
        raise NotCanonical(f"{what} is not a whole number of at least {least}")
    return value


def _stamp(value, what: str) -> str:
    if not isinstance(value, str) or not _STAMP.fullmatch(value):
        raise NotCanonical(f"{what} is not a canon-v1 timestamp (YYYY-MM-DDTHH:MM:SS.ffffffZ)")
    return value


def _version(document: dict, kind: str) -> list[str]:
    """What is wrong with a file's kind, canon and schema_version."""
    if not isinstance(document, dict) or document.get("kind") != kind or document.get("canon") != CANON:
        got = document if isinstance(document, dict) else {}
        return [f"not an evalledger {CANON} {kind.removeprefix('ledger_')} (kind {got.get('kind')!r}, "
                f"canon {got.get('canon')!r})"]
    version = document.get("schema_version")
    if type(version) is not int or version != SCHEMA_VERSIONS[kind]:
        return [f"its schema_version is {version!r}: this checker reads {kind.removeprefix('ledger_')} files of "
                f"schema_version {SCHEMA_VERSIONS[kind]} only"]
    return []


def code_fingerprint(code: dict[str, str]) -> str:
    """The fingerprint of the ledger's code: SHA-256 of the lines `<kind> <name>` TAB `<hash>` LF of every
    definition, in bytewise order of the line (docs/ledger.md, "The code fingerprint")."""
    lines = sorted(f"{name}\t{digest}\n".encode("utf-8") for name, digest in code.items())
    return hashlib.sha256(b"".join(lines)).hexdigest()


def _check_code(digest: dict) -> list[str]:
    """A digest's code (optional, both fields or neither): each definition's hash, and the fingerprint over them."""
    if "code" not in digest and "code_fingerprint" not in digest:
        return []
    code, pinned = digest.get("code"), digest.get("code_fingerprint")
    if not isinstance(code, dict) or not code or not all(
            isinstance(name, str) and isinstance(h, str) and _HEX.fullmatch(h) for name, h in code.items()):
        return ["the digest's code is not a map of each definition's name to 64 lowercase hex digits"]
    if not isinstance(pinned, str) or not _HEX.fullmatch(pinned):
        return ["the digest's code_fingerprint is not 64 lowercase hex digits"]
    if code_fingerprint(code) != pinned:
        return ["the digest's code is not the code its code_fingerprint pins"]
    return []


def code_changes(old: dict, new: dict) -> list[str]:
    """Each definition changed, added or removed between two digests' code, by name, in order."""
    then, now = old.get("code") or {}, new.get("code") or {}
    return sorted([f"{name} changed" for name in then.keys() & now.keys() if then[name] != now[name]]
                  + [f"{name} added" for name in now.keys() - then.keys()]
                  + [f"{name} removed" for name in then.keys() - now.keys()])


def check_digest(digest: dict) -> list[str]:
    """What is wrong with a digest file by itself, field by field (nothing: an empty list)."""
    problems = _version(digest, "ledger_digest")
    if problems:
        return problems
    checks = (
        ("ledger_id", lambda v: isinstance(v, str) and _UUID.fullmatch(v), "is not a lowercase uuid"),
        ("database", lambda v: isinstance(v, str), "is not a string"),
        ("block", lambda v: type(v) is int and v >= 1, "is not a block number (1 or more)"),
        ("ledger_size", lambda v: v == digest.get("block"), "is not the digest's block (the ledger tree has a "
                                                              "leaf per block)"),
        ("block_hash", lambda v: isinstance(v, str) and _HEX.fullmatch(v), "is not 64 lowercase hex digits"),
        ("ledger_root", lambda v: isinstance(v, str) and _HEX.fullmatch(v), "is not 64 lowercase hex digits"),
        ("entries", lambda v: type(v) is int and type(digest.get("block")) is int and v >= digest["block"],
         "is not a count of entries (every block seals one at least)"),
        ("sealed_at", lambda v: isinstance(v, str) and _STAMP.fullmatch(v), "is not a canon-v1 timestamp"),
        ("taken_at", lambda v: isinstance(v, str) and _STAMP.fullmatch(v) and v >= str(digest.get("sealed_at")),
         "is not a canon-v1 timestamp at or after sealed_at"),
    )
    for field, good, says in checks:
        if field not in digest:
            problems.append(f"the digest has no {field}")
        elif not good(digest[field]):
            problems.append(f"the digest's {field} {says}")
    return problems + _check_code(digest)


def check_proof(proof: dict, digest: dict) -> tuple[list[str], int]:
    """Every problem found checking proof against digest, one line each; and how many rows checked."""
    problems = check_digest(digest)
    if problems:
        return problems, 0
    problems = _version(proof, "ledger_proof")
    if problems:
        return problems, 0
    if proof.get("ledger_id") != digest["ledger_id"]:
        return [f"the proof is of ledger {proof.get('ledger_id')}, the digest of ledger {digest['ledger_id']}"], 0
    ledger = proof.get("ledger") if isinstance(proof.get("ledger"), dict) else {}
    if ledger.get("size") != digest["ledger_size"] or ledger.get("root") != digest["ledger_root"]:
        return [f"the proof is against ledger tree {ledger.get('size')} {ledger.get('root')}, the digest holds "
                f"{digest['ledger_size']} {digest['ledger_root']}"], 0
    ledger_root = _hex(digest["ledger_root"], "the digest's ledger_root")

    roots: dict[int, bytes] = {}
    sizes: dict[int, int] = {}
    for n, block in enumerate(proof.get("blocks") if isinstance(proof.get("blocks"), list) else []):
        header = block.get("header") if isinstance(block, dict) and isinstance(block.get("header"), dict) else {}
        where = f"block {header.get('block', n)}"
        try:
            number = _count(header.get("block"), f"{where}: its number", 1)
            entries = _count(header.get("entries"), f"{where}: its entries", 1)
            for field in ("first_entry", "last_entry"):
                _count(header.get(field), f"{where}: its {field}", 1)
            for field in ("lo_txid", "hi_txid"):
                _count(header.get(field), f"{where}: its {field}")
            _hex(header.get("previous"), f"{where}: its previous")
            root = _hex(header.get("root"), f"{where}: its root")
            _stamp(header.get("sealed_at"), f"{where}: its sealed_at")
            if header.get("canon") != CANON or not isinstance(header.get("sealed_by"), str):
                raise NotCanonical(f"{where}: its header's canon or sealed_by is not canon-v1's")
            computed = sha256(block_text(header).encode("utf-8"))
            stated = _hex(block.get("hash"), f"{where}: hash")
            path = _path(block.get("ledger_path"), f"{where}: ledger_path")
        except (KeyError, NotCanonical) as exc:
            problems.append(f"{where}: its header is incomplete or not canonical: {exc}")
            continue
        if number in roots:
            problems.append(f"{where} appears twice in the proof")
            continue
        if computed != stated:
            problems.append(f"{where}: its header hashes to {computed.hex()}, not to the block hash {stated.hex()} "
                            "the proof gives: the block hash or the header was changed")
            continue
        if number == digest["block"]:
            if stated.hex() != digest["block_hash"]:
                problems.append(f"{where}: its hash differs from the digest's block_hash {digest['block_hash']}")
            if header["sealed_at"] != digest["sealed_at"]:
                problems.append(f"{where}: it was sealed at {header['sealed_at']}, the digest says {digest['sealed_at']}")
            if entries > digest["entries"]:
                problems.append(f"{where} seals {entries} entries, more than the {digest['entries']} the digest "
                                "says every block up to it covers")
        if root_from_path(block_leaf(stated), number - 1, digest["ledger_size"], path) != ledger_root:
            problems.append(f"{where}: its ledger path does not lead to the digest's ledger root: the path or the "
                            "block hash was changed, or the block is not in the ledger the digest holds")
            continue
        roots[number], sizes[number] = root, entries
    if digest["block"] not in roots and not any(p.startswith(f"block {digest['block']}") for p in problems):
        problems.append(f"the proof does not hold the digest's own block {digest['block']}, so its block_hash, "
                        "sealed_at and entries go unchecked")

    rows = proof.get("rows") if isinstance(proof.get("rows"), list) else []
    shown: dict[tuple[str, str], int] = {}
    checked = 0
    for n, row in enumerate(rows):
        if not isinstance(row, dict):
            problems.append(f"row {n + 1}: not a JSON object")
            continue
        key = row.get("key")
        key_text = canonical_json(key) if isinstance(key, dict) else repr(key)
        where = f"row {n + 1} ({row.get('table')} {key_text})"
        try:
            problems.extend(f"{where}: {p}" for p in _check_row(row, roots, sizes))
        except (KeyError, TypeError, NotCanonical) as exc:
            problems.append(f"{where}: malformed: {exc}")
        if (row.get("table"), key_text) in shown:
            problems.append(f"{where}: the proof shows it twice (rows {shown[(row.get('table'), key_text)]} and {n + 1})")
        shown.setdefault((row.get("table"), key_text), n + 1)
        checked += 1
    if not checked:
        problems.append("the proof holds no rows")
    problems.extend(_check_whole(proof, shown, roots, sizes))
    return problems, checked


def _check_whole(proof: dict, shown: dict[tuple[str, str], int], roots: dict[int, bytes], sizes: dict[int, int]) -> list[str]:
    """The run's manifest (the journal entry its completion wrote, listing every row of the run by table and
    key) against the rows the proof shows: none missing, none added, and the subject the manifest's run."""
    manifest = proof.get("manifest")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("entry"), dict):
        return ["the proof carries no manifest: it cannot show that the run is whole"]
    entry = manifest["entry"]
    try:
        if entry.get("op") != "MANIFEST" or entry.get("table") != "brain_eval_log":
            return [f"its manifest is a {entry.get('op')!r} entry of {entry.get('table')!r}, not a run's MANIFEST"]
        _count(entry.get("entry"), "the manifest's entry", 1)
        _stamp(entry.get("recorded_at"), "the manifest's recorded_at")
        if entry.get("canon") != CANON:
            raise NotCanonical("the manifest entry's canon is not canon-v1")
        items = entry.get("key")
        if not isinstance(items, list) or len(items) < 2 or _count(entry.get("rows"), "the manifest's rows", 2) != len(items):
            return ["the manifest's key does not list as many rows as it says it covers"]
        texts = []
        for item in items:
            if not (isinstance(item, dict) and set(item) == {"key", "table"} and isinstance(item["key"], dict)
                    and isinstance(item["table"], str)):
                return ["the manifest lists an item that is not {\"key\":{...},\"table\":\"...\"}"]
            texts.append(canonical_json(item))
        if any(a.encode("utf-8") >= b.encode("utf-8") for a, b in zip(texts, texts[1:])):
            return ["the manifest's items are not in bytewise order of their canonical text, each once"]
        rows_root = _hex(entry.get("rows_root"), "the manifest's rows_root")
        if merkle_root([leaf_hash(t.encode("utf-8")) for t in texts]) != rows_root:
            return ["the manifest's items do not hash to its rows_root: the manifest was changed"]
        block = manifest.get("block")
        if block not in roots:
            return [f"the manifest's block {block!r} is not among the proof's checked blocks"]
        entry_leaf = leaf_hash(entry_text(entry).encode("utf-8"))
        if root_from_path(entry_leaf, _count(manifest.get("entry_index"), "the manifest's entry_index"), sizes[block],
                          _path(manifest.get("entry_path"), "the manifest's entry_path")) != roots[block]:
            return [f"the manifest's entry_path does not lead from it to block {block}'s root: the manifest or the "
                    "path was changed"]
    except (KeyError, TypeError, NotCanonical) as exc:
        return [f"the manifest is malformed: {exc}"]

    problems = []
    runs = [item["key"] for item in items if item["table"] == "brain_eval_log"]
    subject = proof.get("subject") if isinstance(proof.get("subject"), dict) else {}
    if len(runs) != 1 or runs[0] != {"eval_run_id": subject.get("run")} or subject.get("suite") != "brain-eval":
        problems.append(f"the proof is of run {subject.get('run')!r}, but its manifest is of "
                        f"{', '.join(str(r.get('eval_run_id')) for r in runs) or 'no run'}")
    named = {(item["table"], canonical_json(item["key"])) for item in items}
    for table, key in sorted(named - set(shown)):
        problems.append(f"{table} {key}: a row of the run's manifest is missing from the proof")
    for (table, key), n in sorted(shown.items(), key=lambda kv: kv[1]):
        if (table, key) not in named and table not in AFTER_COMPLETION:
            problems.append(f"row {n} ({table} {key}): the run's manifest does not name it: a row added to the proof")
    return problems


def _check_row(row: dict, block_roots: dict[int, bytes], block_sizes: dict) -> list[str]:
    # The canonical form is the leaf's preimage: its bytes are hashed as given. Parsing it only reads
    # the values back (the key must be among them); a byte changed changes the hash.
    if not isinstance(row["canonical"], str):
        return ["its canonical form is not a string"]
    try:
        values = parse_json(row["canonical"])
    except (json.JSONDecodeError, NotCanonical) as exc:
        return [f"its canonical form is not JSON: {exc}"]
    if not isinstance(values, dict):
        return ["its canonical form is not a JSON object"]
    key = row["key"]
    if not isinstance(key, dict) or not key or any(column not in values or values[column] != value
                                                   for column, value in key.items()):
        return ["its canonical form does not hold its key"]
    leaf = leaf_hash(row["canonical"].encode("utf-8"))
    entry = row["entry"]
    if not isinstance(entry, dict) or set(entry) != set(ENTRY_FIELDS):
        return [f"its journal entry does not hold exactly the fields {', '.join(ENTRY_FIELDS)}"]
    if entry["table"] != row["table"]:
        return [f"its journal entry is of table {entry['table']!r}"]
    if entry["op"] not in ROW_OPERATIONS or entry["canon"] != CANON:
        return [f"its journal entry is a {entry['op']!r} entry (canon {entry['canon']!r}), not a row version's"]
    _count(entry["entry"], "its entry's id", 1)
    _stamp(entry["recorded_at"], "its entry's recorded_at")
    rows_root = _hex(entry["rows_root"], "its entry's rows_root")
    if _count(entry["rows"], "its entry's rows", 1) == 1:
        if entry["key"] != key:
            return ["its journal entry names another key"]
        if leaf != rows_root:
            return [f"its canonical form hashes to {leaf.hex()}, not to its journal entry's rows_root {rows_root.hex()}: "
                    "the row (or the entry) was changed"]
    else:
        index = _count(row["row_index"], "its row_index")
        if not isinstance(entry["key"], list) or len(entry["key"]) != entry["rows"] or not index < entry["rows"] \
                or entry["key"][index] != key:
            return ["its journal entry does not list its key at row_index"]
        if root_from_path(leaf, index, entry["rows"], _path(row["row_path"], "row_path")) != rows_root:
            return ["its row_path does not lead from its canonical form to its entry's rows_root: the row or the path "
                    "was changed"]
    block = row["block"]
    if type(block) is not int or block not in block_roots:
        return [f"its block {block!r} is not among the proof's checked blocks"]
    entry_leaf = leaf_hash(entry_text(entry).encode("utf-8"))
    if root_from_path(entry_leaf, _count(row["entry_index"], "its entry_index"), block_sizes[block],
                      _path(row["entry_path"], "entry_path")) != block_roots[block]:
        return [f"its entry_path does not lead from its journal entry to block {block}'s root: the entry or the path "
                "was changed"]
    return []


def check_consistency(proof: dict, old: dict, new: dict) -> list[str]:
    """Every problem found checking that the ledger of digest new extends that of digest old unchanged
    (a rollback, old holding more blocks than new, or a fork, the same size with another root, fails)."""
    problems = check_digest(old) + check_digest(new)
    if problems:
        return problems
    problems = _version(proof, "ledger_consistency")
    if problems:
        return problems
    if old["ledger_id"] != new["ledger_id"] or proof.get("ledger_id") != old["ledger_id"]:
        return ["the digests (or the proof) are of different ledgers"]
    m, n = old["ledger_size"], new["ledger_size"]
    if m > n:
        return [f"rolled back: the new digest holds {n} blocks, fewer than the {m} of the old one"]
    if m == n and old["ledger_root"] != new["ledger_root"]:
        return [f"forked: both digests hold {n} blocks, with different ledger roots"]
    want = {"old": (m, old["ledger_root"]), "new": (n, new["ledger_root"])}
    for side, (size, root) in want.items():
        stated = proof.get(side) if isinstance(proof.get(side), dict) else {}
        if (stated.get("size"), stated.get("root")) != (size, root):
            problems.append(f"the proof's {side} tree {stated.get('size')} {stated.get('root')} is not the {side} "
                            f"digest's {size} {root}")
    if problems:
        return problems
    try:
        path = _path(proof.get("proof"), "proof")
        ok = consistent(m, n, _hex(old["ledger_root"], "old ledger_root"), _hex(new["ledger_root"], "new ledger_root"),
                        path)
    except NotCanonical as exc:
        return [str(exc)]
    return [] if ok else [f"the ledger of {n} blocks does not extend the ledger of {m} blocks unchanged (the "
                          "consistency proof fails): a fork"]


# -- signatures ------------------------------------------------------------------------------------


def check_signature(digest_path: str, allowed_signers: str) -> list[str]:
    """Whether DIGEST.sig is an SSH signature of the digest file's bytes, in SIGNATURE_NAMESPACE, by a key
    allowed_signers lists (OpenSSH's ssh-keygen -Y find-principals and -Y verify do the cryptography)."""
    signature = digest_path + ".sig"
    try:
        with open(digest_path, "rb") as handle:
            data = handle.read()
        open(signature, "rb").close()
    except OSError:
        return [f"{digest_path}: no signature {signature} to check against {allowed_signers}"]
    try:
        found = subprocess.run(["ssh-keygen", "-Y", "find-principals", "-s", signature, "-f", allowed_signers],
                               capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise SystemExit(_fail("ssh-keygen (OpenSSH) is not installed: it checks the signatures"))
    principals = [p for p in found.stdout.splitlines() if p.strip()]
    if found.returncode != 0 or not principals:
        return [f"{digest_path}: its signature is by no key {allowed_signers} allows"]
    for principal in principals:
        done = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", allowed_signers, "-I", principal, "-n",
                               SIGNATURE_NAMESPACE, "-s", signature], input=data, capture_output=True, timeout=60)
        if done.returncode == 0:
            return []
    return [f"{digest_path}: its signature does not verify (the digest or the signature was changed, or it was "
            f"signed for another purpose than {SIGNATURE_NAMESPACE})"]


def _load(path: str):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle, parse_float=Decimal, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
    except OSError as exc:
        raise SystemExit(_fail(f"{path}: cannot read: {exc.strerror}"))
    except (json.JSONDecodeError, UnicodeDecodeError, NotCanonical) as exc:
        raise SystemExit(_fail(f"{path}: not JSON: {exc}"))


def _compare_code(paths: list[str], digests: list) -> int:
    problems = []
    for path, digest in zip(paths, digests):
        found = check_digest(digest) if isinstance(digest, dict) else ["it is not a JSON object"]
        if not found and "code" not in digest:
            found = ["it pins no code (a digest of an evalledger before code fingerprints)"]
        problems += [f"{path}: {problem}" for problem in found]
    if not problems:
        changes = code_changes(*digests)
        if not changes:
            print(f"ok: {paths[1]} pins the code {paths[0]} pinned ({len(digests[1]['code'])} definitions)")
        problems = changes
    for problem in problems:
        print(f"FAIL: {problem}")
    return EXIT_FAIL if problems else EXIT_OK


def _fail(message: str) -> int:
    print(f"check: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in args):
        print(__doc__.strip())
        return EXIT_OK
    signers = None
    if "--allowed-signers" in args:
        at = args.index("--allowed-signers")
        if at + 1 >= len(args):
            return _fail("--allowed-signers needs a FILE (OpenSSH's allowed_signers format)")
        signers = args[at + 1]
        del args[at:at + 2]
        if not os.path.isfile(signers):
            return _fail(f"{signers}: cannot read: no such allowed-signers file")
    if "--code" in args:
        args.remove("--code")
        if len(args) != 2:
            return _fail("--code compares two digests: give the older and the newer")
        return _compare_code(args, [_load(path) for path in args])
    if len(args) not in (1, 2, 3) or (len(args) == 1 and signers is None):
        return _fail("give a proof and its digest, or a consistency proof and its old and new digests "
                     "(python -m evalledger.ledger.check --help)")
    documents = [_load(path) for path in args]
    problems = []
    if signers is not None:
        for path, document in zip(args, documents):
            if isinstance(document, dict) and document.get("kind") == "ledger_digest":
                problems.extend(check_signature(path, signers))
    if len(args) == 3:
        problems += check_consistency(*documents)
        if not problems:
            print(f"ok: the ledger of digest {args[2]} extends that of {args[1]} unchanged")
    elif len(args) == 2:
        proof, digest = documents
        found, checked = check_proof(proof, digest)
        problems += found
        if not problems:
            size = digest["ledger_size"]
            print(f"ok: {checked} rows of {proof['subject']['run']}, every row its manifest names, are in the ledger of "
                  f"{size} block{'' if size == 1 else 's'} that {args[1]} holds")
    else:
        problems += check_digest(documents[0])
        if not problems:
            print(f"ok: {args[0]} is a digest of block {documents[0]['block']}, signed by a key {signers} allows")
    for problem in problems:
        print(f"FAIL: {problem}")
    return EXIT_FAIL if problems else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
