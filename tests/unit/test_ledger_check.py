"""check.py without a database: canon-v1's JSON, RFC 6962's trees and proofs, and that it needs only Python."""

from __future__ import annotations

import ast
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from evalledger.ledger import canon, check

CHECK = Path(check.__file__)


def rfc_mth(leaves: list[bytes]) -> bytes:
    """RFC 6962's MTH exactly as written: split at the largest power of two below n."""
    if not leaves:
        return check.sha256(b"")
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return check.node_hash(rfc_mth(leaves[:k]), rfc_mth(leaves[k:]))


def leaves(n: int) -> list[bytes]:
    return [check.leaf_hash(i.to_bytes(4, "big")) for i in range(n)]


def test_leaves_and_nodes_are_prefixed_as_rfc_6962_says():
    assert check.leaf_hash(b"") == bytes.fromhex("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d")
    assert check.node_hash(b"a", b"b") == check.sha256(b"\x01ab")


@pytest.mark.parametrize("n", range(0, 70))
def test_the_level_by_level_root_is_rfc_6962s_split(n):
    assert check.merkle_root(leaves(n)) == rfc_mth(leaves(n))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31])
def test_every_inclusion_path_leads_to_the_root_and_only_its_own(n):
    tree = leaves(n)
    root = check.merkle_root(tree)
    for i in range(n):
        path = check.inclusion_path(tree, i)
        assert check.root_from_path(tree[i], i, n, path) == root
        assert check.root_from_path(check.leaf_hash(b"other"), i, n, path) != root
        if n > 1:
            assert check.root_from_path(tree[i], (i + 1) % n, n, path) != root
        if path:
            bent = [bytes([path[0][0] ^ 1]) + path[0][1:], *path[1:]]
            assert check.root_from_path(tree[i], i, n, bent) != root
    assert check.root_from_path(tree[0], n, n, []) is None


def test_every_consistency_proof_checks_and_a_changed_tree_fails():
    for n in range(1, 34):
        tree = leaves(n)
        for m in range(1, n + 1):
            proof = check.consistency_proof(tree, m)
            assert check.consistent(m, n, check.merkle_root(tree[:m]), check.merkle_root(tree), proof), (m, n)
            if m < n:
                changed = tree[:m - 1] + [check.leaf_hash(b"rewritten")]
                assert not check.consistent(m, n, check.merkle_root(changed), check.merkle_root(tree), proof)
                assert not check.consistent(m, n, check.merkle_root(tree[:m]), check.merkle_root(tree), proof[:-1])


def test_rfc_6962_consistency_vectors():
    # The proof for (3, 7) has the nodes RFC 6962, 2.1.3, draws: c, d, g, and (i, j) as l.
    tree = leaves(7)
    assert check.consistency_proof(tree, 3) == [tree[2], tree[3], check.node_hash(tree[0], tree[1]),
                                                check.merkle_root(tree[4:])]
    assert check.consistency_proof(tree, 4) == [check.merkle_root(tree[4:])]
    assert check.consistency_proof(tree, 6) == [check.node_hash(tree[4], tree[5]), tree[6], check.merkle_root(tree[:4])]


@pytest.mark.parametrize("value, text", [
    ({"b": 1, "a": [True, None, "x"]}, '{"a":[true,null,"x"],"b":1}'),
    ({"é": 1, "z": 2, "Z": 3}, '{"Z":3,"z":2,"é":1}'),  # code points, not locale
    ({"s": 'q"\\\n\t\x01\u2028é'}, '{"s":"q\\"\\\\\\n\\t\\u0001\u2028é"}'),
    (Decimal("0.9500"), "0.9500"),
    (Decimal("1E+2"), "100"),
    (Decimal("-0.00"), "0.00"),
    (12345678901234567890, "12345678901234567890"),
])
def test_canonical_json(value, text):
    assert check.canonical_json(value) == text
    assert check.check_canonical(text) == value


@pytest.mark.parametrize("text", ['{"b":1,"a":2}', '{"a": 1}', '{"a":1.0e1}', '{"a":1,"a":1}', '{"a":NaN}',
                                  '"\\u00e9"', '{"a":-0}'])
def test_text_not_in_canon_v1_form_is_named(text):
    with pytest.raises(check.NotCanonical):
        check.check_canonical(text)


@pytest.mark.parametrize("number, text", [
    (0.1, "0.10000000000000001"), (1e20, "100000000000000000000"), (220.0, "220.00000000000000"),
    (-0.0, "0.0000000000000000"), (5e-324, "0." + "0" * 323 + "49406564584124654"), (-2.5, "-2.5000000000000000"),
    # A tie between two shortest forms: PostgreSQL's float8out writes 4.3202713150798416e+16, Python's repr
    # 4.320271315079842e+16; canon-v1's seventeen digits are one text.
    (4.320271315079842e+16, "43202713150798416")])
def test_a_double_is_seventeen_correctly_rounded_digits(number, text):
    assert canon.float_text(number) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_doubles_canonical_text_reads_back_as_the_same_double(number):
    assert float(canon.float_text(number)) == number


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text()
                    | st.decimals(allow_nan=False, allow_infinity=False, places=4),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                    max_leaves=20))
@settings(max_examples=200)
def test_canonical_json_reads_back_as_itself(value):
    text = check.canonical_json(value)
    assert check.canonical_json(check.check_canonical(text)) == text


def test_check_imports_only_the_standard_library():
    imported = set()
    for node in ast.walk(ast.parse(CHECK.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            imported.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "check.py imports nothing of its own package"
            imported.add(node.module.split(".")[0])
    assert imported and imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)


def synthetic_proof(rows: list[dict]) -> tuple[dict, dict]:
    """A proof of rows journalled in one entry of several rows (as a capture batch is), sealed in block 1 of
    a ledger of one block, and the digest holding it: built with check.py's own functions."""
    texts = [check.canonical_json(r) for r in rows]
    keys = [{"id": r["id"]} for r in rows]
    leaves = [check.leaf_hash(t.encode()) for t in texts]
    entry = {"canon": "canon-v1", "entry": 7, "key": keys, "op": "INSERT", "recorded_at": "2026-03-01T09:30:00.000000Z",
             "rows": len(rows), "rows_root": check.merkle_root(leaves).hex(), "table": "eval_candidates"}
    entry_leaf = check.leaf_hash(check.entry_text(entry).encode())
    header = {"block": 1, "canon": "canon-v1", "entries": 1, "first_entry": 7, "hi_txid": 900, "last_entry": 7,
              "lo_txid": 0, "previous": check.ZERO_HASH, "root": check.merkle_root([entry_leaf]).hex(),
              "sealed_at": "2026-03-01T09:31:00.000000Z", "sealed_by": "auditor"}
    block_hash = check.sha256(check.block_text(header).encode())
    ledger_root = check.merkle_root([check.block_leaf(block_hash)]).hex()
    proof = {"kind": "ledger_proof", "canon": "canon-v1", "ledger_id": "L", "ledger": {"size": 1, "root": ledger_root},
             "rows": [{"table": "eval_candidates", "key": keys[i], "canonical": texts[i], "entry": entry, "block": 1,
                       "entry_index": 0, "entry_path": [], "row_index": i,
                       "row_path": [h.hex() for h in check.inclusion_path(leaves, i)]} for i in range(len(rows))],
             "blocks": [{"header": header, "hash": block_hash.hex(), "ledger_path": []}]}
    digest = {"kind": "ledger_digest", "canon": "canon-v1", "ledger_id": "L", "ledger_size": 1, "ledger_root": ledger_root,
              "block": 1, "block_hash": block_hash.hex()}
    return proof, digest


def test_a_row_of_an_entry_of_several_rows_checks_alone_and_a_changed_path_is_named():
    proof, digest = synthetic_proof([{"id": i, "query": f"q {i}"} for i in range(1, 6)])
    assert check.check_proof(proof, digest) == ([], 5)
    proof["rows"][3]["row_path"][0] = "0" * 64
    problems, _ = check.check_proof(proof, digest)
    assert problems == ['row 4 (eval_candidates {"id":4}): its row_path does not lead from its canonical form to its '
                        "entry's rows_root: the row or the path was changed"]
    proof, digest = synthetic_proof([{"id": 1, "query": "q"}, {"id": 2, "query": "r"}])
    proof["rows"][1]["canonical"] = '{"id":2,"query":"s"}'
    assert check.check_proof(proof, digest)[0][0].startswith('row 2 (eval_candidates {"id":2}): its row_path')
    proof, digest = synthetic_proof([{"id": 1}])
    digest["ledger_id"] = "M"
    assert check.check_proof(proof, digest)[0] == ["the proof is of ledger L, the digest of ledger M"]
