"""Check an evalledger proof offline, with Python's standard library and nothing else.

    python -m evalledger.ledger.check proof.json digest.json
    python -m evalledger.ledger.check consistency.json old-digest.json new-digest.json

Exit 0 when everything checks, 1 when something does not (one line per problem, naming the row,
the path or the block), 3 when a file cannot be read. This module imports only the standard
library, so an auditor can copy this one file anywhere and run it; docs/ledger.md writes out the
same algorithm step by step, to be re-implemented without it. The rest of evalledger imports its
hashing from here: one definition of canon-v1's JSON and of RFC 6962's trees.
"""

from __future__ import annotations

import hashlib
import json
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


def _hex(value, what: str) -> bytes:
    if not isinstance(value, str) or len(value) != 64:
        raise NotCanonical(f"{what} is not a 64-digit hex SHA-256")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise NotCanonical(f"{what} is not a 64-digit hex SHA-256") from None


def _path(values, what: str) -> list[bytes]:
    if not isinstance(values, list):
        raise NotCanonical(f"{what} is not a list of hashes")
    return [_hex(v, f"{what}[{i}]") for i, v in enumerate(values)]


def check_digest(digest: dict) -> list[str]:
    """What is wrong with a digest file's shape (nothing: an empty list)."""
    if digest.get("kind") != "ledger_digest" or digest.get("canon") != CANON:
        return [f"not an evalledger {CANON} digest (kind {digest.get('kind')!r}, canon {digest.get('canon')!r})"]
    problems = []
    for field in ("ledger_id", "ledger_size", "ledger_root", "block", "block_hash"):
        if field not in digest:
            problems.append(f"the digest has no {field}")
    return problems


def check_proof(proof: dict, digest: dict) -> tuple[list[str], int]:
    """Every problem found checking proof against digest, one line each; and how many rows checked."""
    problems = check_digest(digest)
    if problems:
        return problems, 0
    if proof.get("kind") != "ledger_proof" or proof.get("canon") != CANON:
        return [f"not an evalledger {CANON} proof (kind {proof.get('kind')!r}, canon {proof.get('canon')!r})"], 0
    if proof.get("ledger_id") != digest["ledger_id"]:
        return [f"the proof is of ledger {proof.get('ledger_id')}, the digest of ledger {digest['ledger_id']}"], 0
    ledger = proof.get("ledger") or {}
    if ledger.get("size") != digest["ledger_size"] or ledger.get("root") != digest["ledger_root"]:
        return [f"the proof is against ledger tree {ledger.get('size')} {ledger.get('root')}, the digest holds "
                f"{digest['ledger_size']} {digest['ledger_root']}"], 0
    ledger_root = _hex(digest["ledger_root"], "the digest's ledger_root")

    blocks: dict[int, bytes] = {}
    for n, block in enumerate(proof.get("blocks") or []):
        header = block.get("header") or {}
        where = f"block {header.get('block', n)}"
        try:
            computed = sha256(block_text(header).encode("utf-8"))
        except (KeyError, NotCanonical) as exc:
            problems.append(f"{where}: its header is incomplete or not canonical: {exc}")
            continue
        try:
            stated = _hex(block.get("hash"), f"{where}: hash")
            path = _path(block.get("ledger_path"), f"{where}: ledger_path")
        except NotCanonical as exc:
            problems.append(str(exc))
            continue
        if computed != stated:
            problems.append(f"{where}: its header hashes to {computed.hex()}, not to the block hash {stated.hex()} "
                            "the proof gives: the block hash or the header was changed")
            continue
        if header["block"] == digest["block"] and stated.hex() != digest["block_hash"]:
            problems.append(f"{where}: its hash differs from the digest's block_hash {digest['block_hash']}")
        if root_from_path(block_leaf(stated), header["block"] - 1, digest["ledger_size"], path) != ledger_root:
            problems.append(f"{where}: its ledger path does not lead to the digest's ledger root: the path or the "
                            "block hash was changed, or the block is not in the ledger the digest holds")
            continue
        blocks[header["block"]] = bytes.fromhex(header["root"])
        block["_entries"] = header["entries"]

    sizes = {b.get("header", {}).get("block"): b.get("_entries") for b in proof.get("blocks") or []}
    checked = 0
    for n, row in enumerate(proof.get("rows") or []):
        where = f"row {n + 1} ({row.get('table')} {canonical_json(row.get('key')) if isinstance(row.get('key'), dict) else row.get('key')})"
        try:
            problems.extend(f"{where}: {p}" for p in _check_row(row, blocks, sizes))
        except (KeyError, TypeError, NotCanonical) as exc:
            problems.append(f"{where}: malformed: {exc}")
        checked += 1
    if not checked:
        problems.append("the proof holds no rows")
    return problems, checked


def _check_row(row: dict, block_roots: dict[int, bytes], block_sizes: dict) -> list[str]:
    # The canonical form is the leaf's preimage: its bytes are hashed as given. Parsing it only reads
    # the values back (the key must be among them); a byte changed changes the hash.
    try:
        values = parse_json(row["canonical"])
    except (json.JSONDecodeError, NotCanonical) as exc:
        return [f"its canonical form is not JSON: {exc}"]
    if not isinstance(values, dict):
        return ["its canonical form is not a JSON object"]
    key = row["key"]
    if any(values.get(column) != value for column, value in key.items()):
        return ["its canonical form does not hold its key"]
    leaf = leaf_hash(row["canonical"].encode("utf-8"))
    entry = row["entry"]
    if entry.get("table") != row["table"]:
        return [f"its journal entry is of table {entry.get('table')!r}"]
    rows_root = _hex(entry["rows_root"], "its entry's rows_root")
    if entry["rows"] == 1:
        if entry["key"] != key:
            return ["its journal entry names another key"]
        if leaf != rows_root:
            return [f"its canonical form hashes to {leaf.hex()}, not to its journal entry's rows_root {rows_root.hex()}: "
                    "the row (or the entry) was changed"]
    else:
        index = row["row_index"]
        if not isinstance(entry["key"], list) or not 0 <= index < len(entry["key"]) or entry["key"][index] != key:
            return ["its journal entry does not list its key at row_index"]
        if root_from_path(leaf, index, entry["rows"], _path(row["row_path"], "row_path")) != rows_root:
            return ["its row_path does not lead from its canonical form to its entry's rows_root: the row or the path "
                    "was changed"]
    block = row["block"]
    if block not in block_roots:
        return [f"its block {block} is not among the proof's checked blocks"]
    entry_leaf = leaf_hash(entry_text(entry).encode("utf-8"))
    if root_from_path(entry_leaf, row["entry_index"], block_sizes[block],
                      _path(row["entry_path"], "entry_path")) != block_roots[block]:
        return [f"its entry_path does not lead from its journal entry to block {block}'s root: the entry or the path "
                "was changed"]
    return []


def check_consistency(proof: dict, old: dict, new: dict) -> list[str]:
    """Every problem found checking that the ledger of digest new extends that of digest old unchanged."""
    problems = check_digest(old) + check_digest(new)
    if problems:
        return problems
    if old["ledger_id"] != new["ledger_id"] or proof.get("ledger_id") != old["ledger_id"]:
        return ["the digests (or the proof) are of different ledgers"]
    if proof.get("kind") != "ledger_consistency":
        return [f"not an evalledger consistency proof (kind {proof.get('kind')!r})"]
    want = {"old": (old["ledger_size"], old["ledger_root"]), "new": (new["ledger_size"], new["ledger_root"])}
    for side, (size, root) in want.items():
        stated = proof.get(side) or {}
        if (stated.get("size"), stated.get("root")) != (size, root):
            problems.append(f"the proof's {side} tree {stated.get('size')} {stated.get('root')} is not the {side} "
                            f"digest's {size} {root}")
    if problems:
        return problems
    try:
        path = _path(proof.get("proof"), "proof")
        ok = consistent(old["ledger_size"], new["ledger_size"], _hex(old["ledger_root"], "old ledger_root"),
                        _hex(new["ledger_root"], "new ledger_root"), path)
    except NotCanonical as exc:
        return [str(exc)]
    return [] if ok else [f"the ledger of {new['ledger_size']} blocks does not extend the ledger of "
                          f"{old['ledger_size']} blocks unchanged (the consistency proof fails)"]


def _load(path: str):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle, parse_float=Decimal)
    except OSError as exc:
        raise SystemExit(_fail(f"{path}: cannot read: {exc.strerror}"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SystemExit(_fail(f"{path}: not JSON: {exc}"))


def _fail(message: str) -> int:
    print(f"check: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if any(a in ("-h", "--help") for a in args):
        print(__doc__.strip())
        return EXIT_OK
    if len(args) not in (2, 3):
        return _fail("give a proof and its digest, or a consistency proof and its old and new digests "
                     "(python -m evalledger.ledger.check --help)")
    first = _load(args[0])
    if len(args) == 3:
        problems = check_consistency(first, _load(args[1]), _load(args[2]))
        if not problems:
            print(f"ok: the ledger of digest {args[2]} extends that of {args[1]} unchanged")
    else:
        digest = _load(args[1])
        problems, checked = check_proof(first, digest)
        if not problems:
            size = digest["ledger_size"]
            print(f"ok: {checked} rows of {first.get('subject', {}).get('run', 'the proof')} are in the ledger of "
                  f"{size} block{'' if size == 1 else 's'} that {args[1]} holds")
    for problem in problems:
        print(f"FAIL: {problem}")
    return EXIT_FAIL if problems else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
