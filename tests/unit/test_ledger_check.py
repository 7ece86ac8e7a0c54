"""check.py without a database: canon-v1's JSON, RFC 6962's trees and proofs, and that it needs only Python."""

from __future__ import annotations

import ast
import hashlib
import json
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


RUN = "0f6d1f7e-57c1-4c5e-9f3e-0d6a3c1b2a90"
LEDGER = "7a1c2e3d-4b5f-4a6b-8c7d-9e0f1a2b3c4d"


def synthetic_proof(rows: list[dict]) -> tuple[dict, dict]:
    """A proof of run RUN: its question rows journalled in one entry of several rows (as a batch is), the run's
    row in an entry of its own and the manifest naming them all, sealed in block 1 of a ledger of one block, and
    the digest holding it: built with check.py's own functions."""
    texts = [check.canonical_json(r) for r in rows]
    keys = [{"id": r["id"]} for r in rows]
    leaves = [check.leaf_hash(t.encode()) for t in texts]
    stamp = "2026-03-01T09:30:00.000000Z"
    batch = {"canon": "canon-v1", "entry": 7, "key": keys, "op": "INSERT", "recorded_at": stamp,
             "rows": len(rows), "rows_root": check.merkle_root(leaves).hex(), "table": "brain_eval_question_score"}
    run_text = check.canonical_json({"eval_run_id": RUN, "decision": "fail"})
    run_entry = {"canon": "canon-v1", "entry": 8, "key": {"eval_run_id": RUN}, "op": "UPDATE", "recorded_at": stamp,
                 "rows": 1, "rows_root": check.leaf_hash(run_text.encode()).hex(), "table": "brain_eval_log"}
    items = sorted(({"key": k, "table": "brain_eval_question_score"} for k in keys),
                   key=lambda i: check.canonical_json(i).encode())
    items = sorted([*items, {"key": {"eval_run_id": RUN}, "table": "brain_eval_log"}],
                   key=lambda i: check.canonical_json(i).encode())
    manifest = {"canon": "canon-v1", "entry": 9, "key": items, "op": "MANIFEST", "recorded_at": stamp,
                "rows": len(items), "table": "brain_eval_log", "rows_root": check.merkle_root(
                    [check.leaf_hash(check.canonical_json(i).encode()) for i in items]).hex()}
    entry_leaves = [check.leaf_hash(check.entry_text(e).encode()) for e in (batch, run_entry, manifest)]
    header = {"block": 1, "canon": "canon-v1", "entries": 3, "first_entry": 7, "hi_txid": 900, "last_entry": 9,
              "lo_txid": 0, "previous": check.ZERO_HASH, "root": check.merkle_root(entry_leaves).hex(),
              "sealed_at": "2026-03-01T09:31:00.000000Z", "sealed_by": "auditor"}
    block_hash = check.sha256(check.block_text(header).encode())
    ledger_root = check.merkle_root([check.block_leaf(block_hash)]).hex()

    def path(i):
        return [h.hex() for h in check.inclusion_path(entry_leaves, i)]
    proof = {"schema_version": 2, "kind": "ledger_proof", "canon": "canon-v1", "ledger_id": LEDGER,
             "subject": {"suite": "brain-eval", "run": RUN}, "ledger": {"size": 1, "root": ledger_root},
             "manifest": {"entry": manifest, "block": 1, "entry_index": 2, "entry_path": path(2)},
             "rows": [{"table": "brain_eval_question_score", "key": keys[i], "canonical": texts[i], "entry": batch,
                       "block": 1, "entry_index": 0, "entry_path": path(0), "row_index": i,
                       "row_path": [h.hex() for h in check.inclusion_path(leaves, i)]} for i in range(len(rows))]
             + [{"table": "brain_eval_log", "key": {"eval_run_id": RUN}, "canonical": run_text, "entry": run_entry,
                 "block": 1, "entry_index": 1, "entry_path": path(1)}],
             "blocks": [{"header": header, "hash": block_hash.hex(), "ledger_path": []}]}
    digest = {"schema_version": 1, "kind": "ledger_digest", "canon": "canon-v1", "ledger_id": LEDGER, "database": "d",
              "ledger_size": 1, "ledger_root": ledger_root, "block": 1, "block_hash": block_hash.hex(), "entries": 3,
              "sealed_at": header["sealed_at"], "taken_at": "2026-03-01T09:32:00.000000Z"}
    return proof, digest


def test_a_row_of_an_entry_of_several_rows_checks_alone_and_a_changed_path_is_named():
    proof, digest = synthetic_proof([{"id": i, "query": f"q {i}"} for i in range(1, 6)])
    assert check.check_proof(proof, digest) == ([], 6)
    proof["rows"][3]["row_path"][0] = "0" * 64
    problems, _ = check.check_proof(proof, digest)
    assert problems == ['row 4 (brain_eval_question_score {"id":4}): its row_path does not lead from its canonical '
                        "form to its entry's rows_root: the row or the path was changed"]
    proof, digest = synthetic_proof([{"id": 1, "query": "q"}, {"id": 2, "query": "r"}])
    proof["rows"][1]["canonical"] = '{"id":2,"query":"s"}'
    assert check.check_proof(proof, digest)[0][0].startswith('row 2 (brain_eval_question_score {"id":2}): its row_path')
    proof, digest = synthetic_proof([{"id": 1}, {"id": 2}])
    digest["ledger_id"] = "7a1c2e3d-4b5f-4a6b-8c7d-9e0f1a2b3c4e"
    assert check.check_proof(proof, digest)[0] == [f"the proof is of ledger {LEDGER}, the digest of ledger "
                                                   "7a1c2e3d-4b5f-4a6b-8c7d-9e0f1a2b3c4e"]


def test_a_proof_shows_the_whole_run_its_manifest_names():
    proof, digest = synthetic_proof([{"id": i} for i in range(1, 4)])
    assert check.check_proof(proof, digest) == ([], 4)
    # A row removed: the manifest names it.
    cut = json.loads(json.dumps(proof))
    del cut["rows"][1]
    assert check.check_proof(cut, digest)[0] == [
        'brain_eval_question_score {"id":2}: a row of the run\'s manifest is missing from the proof']
    # Cut to one row: every other row is missing.
    one = json.loads(json.dumps(proof))
    one["rows"] = one["rows"][-1:]
    assert len(check.check_proof(one, digest)[0]) == 3
    # A row added (a copy of a row under a key the manifest does not name fails its own check, too).
    added = json.loads(json.dumps(proof))
    added["rows"].append({**added["rows"][0], "key": {"id": 9}})
    assert any("the run's manifest does not name it: a row added to the proof" in p
               for p in check.check_proof(added, digest)[0])
    # Relabelled to another run.
    other = json.loads(json.dumps(proof))
    other["subject"]["run"] = "11111111-2222-4333-8444-555555555555"
    assert check.check_proof(other, digest)[0] == [
        f"the proof is of run '11111111-2222-4333-8444-555555555555', but its manifest is of {RUN}"]
    # No manifest, or one changed.
    bare = json.loads(json.dumps(proof))
    del bare["manifest"]
    assert check.check_proof(bare, digest)[0] == ["the proof carries no manifest: it cannot show that the run is whole"]
    trimmed = json.loads(json.dumps(proof))
    trimmed["manifest"]["entry"]["key"].pop(0)
    trimmed["manifest"]["entry"]["rows"] -= 1
    assert check.check_proof(trimmed, digest)[0][0] == ("the manifest's items do not hash to its rows_root: the "
                                                         "manifest was changed")


@pytest.mark.parametrize("change, says", [
    (lambda p, d: d.update(block_hash=d["block_hash"].upper()), "the digest's block_hash is not 64 lowercase hex"),
    (lambda p, d: p["blocks"][0].update(hash=p["blocks"][0]["hash"].upper()), "hash is not a SHA-256 in 64 lowercase"),
    (lambda p, d: d.update(schema_version=2), "its schema_version is 2: this checker reads digest files of "
                                              "schema_version 1 only"),
    (lambda p, d: p.update(schema_version=3), "its schema_version is 3: this checker reads proof files of "
                                              "schema_version 2 only"),
    (lambda p, d: d.update(sealed_at="2026-03-01T09:31:00.000001Z"), "block 1: it was sealed at "),
    (lambda p, d: d.update(entries=2), "block 1 seals 3 entries, more than the 2 the digest says"),
    (lambda p, d: d.update(block=2), "the digest's ledger_size is not the digest's block"),
    (lambda p, d: d.update(taken_at="2026-03-01T09:30:00.000000Z"), "the digest's taken_at is not a canon-v1 "
                                                                    "timestamp at or after sealed_at"),
    (lambda p, d: d.pop("entries"), "the digest has no entries"),
])
def test_check_refuses_what_is_not_exactly_canon_v1(change, says):
    proof, digest = synthetic_proof([{"id": 1}, {"id": 2}])
    change(proof, digest)
    problems, _ = check.check_proof(proof, digest)
    assert any(says in p for p in problems), problems


def test_consistency_refuses_a_rollback_and_a_fork_whichever_way_given():
    leaves = [check.block_leaf(check.sha256(bytes([i]))) for i in range(6)]

    def digest(n, root=None):
        return {"schema_version": 1, "kind": "ledger_digest", "canon": "canon-v1", "ledger_id": LEDGER, "database": "d",
                "block": n, "ledger_size": n, "block_hash": check.ZERO_HASH, "entries": n,
                "ledger_root": root or check.merkle_root(leaves[:n]).hex(), "sealed_at": "2026-03-01T09:31:00.000000Z",
                "taken_at": "2026-03-01T09:31:00.000000Z"}
    old, new = digest(3), digest(6)
    proof = {"schema_version": 1, "kind": "ledger_consistency", "canon": "canon-v1", "ledger_id": LEDGER,
             "old": {"size": 3, "root": old["ledger_root"]}, "new": {"size": 6, "root": new["ledger_root"]},
             "proof": [h.hex() for h in check.consistency_proof(leaves, 3)]}
    assert check.check_consistency(proof, old, new) == []
    assert check.check_consistency(proof, new, old)[0].startswith("rolled back: the new digest holds 3 blocks")
    forked = digest(6, check.ZERO_HASH)
    assert check.check_consistency(proof, forked, new)[0].startswith("forked: both digests hold 6 blocks")
    assert check.check_consistency(proof, new, forked)[0].startswith("forked: both digests hold 6 blocks")


def test_a_readers_compact_range_grows_to_rfc_6962s_root():
    """The tree a reader keeps as it grows (remember._grow, _root) is the Merkle tree hash of every block."""
    from evalledger.ledger import remember

    hashes = [check.sha256(bytes([i])) for i in range(40)]
    frontier = []
    for n in range(1, 41):
        frontier = remember._grow(frontier, hashes[n - 1:n])
        assert remember._root(frontier) == check.merkle_root([check.block_leaf(h) for h in hashes[:n]]), n
    assert remember._grow([], hashes) == frontier


def test_a_reader_refuses_a_rollback_and_a_fork_with_or_without_the_hashes_it_kept(tmp_path):
    from evalledger.ledger import remember

    hashes = [check.sha256(bytes([i])) for i in range(12)]
    frontier = remember._grow([], hashes[:9])
    seen = {"ledger_size": 9, "block_hash": hashes[8].hex(), "ledger_root": remember._root(frontier).hex(),
            "frontier": [[size, node.hex()] for size, node in frontier]}
    path = tmp_path / "seen.json"
    (tmp_path / "seen.hashes").write_bytes(b"".join(hashes[:9]))
    forked = hashes[:4] + [check.sha256(b"other")] + hashes[5:]
    for kept in (path, None):
        assert remember.extends(seen, b"".join(hashes), "here", kept) == (frontier, kept is not None)
        with pytest.raises(remember.LedgerRewound, match="rolled back: it holds 6 blocks, but this reader saw 9"):
            remember.extends(seen, b"".join(hashes[:6]), "here", kept)
        with pytest.raises(remember.LedgerRewound, match=r"forked: its first 9 blocks \(of 12\) are not the 9"):
            remember.extends(seen, b"".join(forked), "here", kept)
    # Hashes kept past the digest's blocks (a reader stopped while remembering) are not read.
    (tmp_path / "seen.hashes").write_bytes(b"".join(hashes[:9]) + bytes(64))
    assert remember.extends(seen, b"".join(hashes), "here", path) == (frontier, True)


def _with_code(digest: dict, code: dict[str, str]) -> dict:
    return {**digest, "code": code, "code_fingerprint": check.code_fingerprint(code)}


CODE = {"function evalledger.decide_v1(uuid)": "a" * 64, "policy evalledger.brain_eval_log.reviewer_reads": "b" * 64,
        "constraint evalledger.brain_eval_log.decision_known": "c" * 64}


def test_a_digests_code_must_be_the_code_its_fingerprint_pins():
    _, digest = synthetic_proof([{"id": 1, "v": "x"}])
    pinned = _with_code(digest, CODE)
    assert check.check_digest(pinned) == []
    # The fingerprint as docs/ledger.md writes it: the sorted lines `<kind> <name>` TAB `<hash>` LF.
    lines = sorted(f"{name}\t{h}\n".encode() for name, h in CODE.items())
    assert pinned["code_fingerprint"] == hashlib.sha256(b"".join(lines)).hexdigest()
    swapped = {**pinned, "code": {**CODE, "function evalledger.decide_v1(uuid)": "d" * 64}}
    assert check.check_digest(swapped) == ["the digest's code is not the code its code_fingerprint pins"]
    assert check.check_digest({**pinned, "code": {**CODE, "trigger x": "A" * 64}})[0].startswith("the digest's code is not a map")
    assert check.check_digest({k: v for k, v in pinned.items() if k != "code"}) == [
        "the digest's code is not a map of each definition's name to 64 lowercase hex digits"]


def test_check_compares_two_digests_code_naming_each_change(tmp_path, capsys):
    _, digest = synthetic_proof([{"id": 1, "v": "x"}])
    old, same = tmp_path / "old.json", tmp_path / "same.json"
    old.write_text(json.dumps(_with_code(digest, CODE)))
    same.write_text(json.dumps(_with_code(digest, dict(CODE))))
    assert check.main(["--code", str(old), str(same)]) == check.EXIT_OK
    assert capsys.readouterr().out == f"ok: {same} pins the code {old} pinned (3 definitions)\n"
    changed = dict(CODE)
    changed["policy evalledger.brain_eval_log.reviewer_reads"] = "e" * 64
    del changed["constraint evalledger.brain_eval_log.decision_known"]
    changed["trigger evalledger.brain_eval_log.quiet"] = "f" * 64
    new = tmp_path / "new.json"
    new.write_text(json.dumps(_with_code(digest, changed)))
    assert check.main(["--code", str(old), str(new)]) == check.EXIT_FAIL
    assert capsys.readouterr().out == (
        "FAIL: constraint evalledger.brain_eval_log.decision_known removed\n"
        "FAIL: policy evalledger.brain_eval_log.reviewer_reads changed\n"
        "FAIL: trigger evalledger.brain_eval_log.quiet added\n")
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(digest))
    assert check.main(["--code", str(old), str(bare)]) == check.EXIT_FAIL
    assert "pins no code" in capsys.readouterr().out
