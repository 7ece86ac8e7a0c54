"""Signed digests kept outside, and readers that remember (issue 35, item 4; item 6's consistency): a digest
signed with an SSH key verifies with ssh-keygen through check.py and fails with one byte changed; `ledger
publish` appends to a folder or commits to a git repository; `ledger watch` exits 1 at the first rollback; a
reader that saw N blocks refuses a ledger rolled back to N-3 or forked at N (exit 1, both sizes named);
`ledger consistency` exits 1 for a rollback or fork whichever way the digests are given."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from evalledger.ledger import check
from tests.cli import run_cli
from tests.e2e.test_journal_cli import digest_to, env, standalone_check  # noqa: F401  (env: a fixture)
from tests.ledger_forge import triggers_lifted

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="OpenSSH's ssh-keygen signs digests")


@pytest.fixture
def reader(env, tmp_path):  # noqa: F811
    """The environment of a person's commands, with a home of their own."""
    return {**env, "EVALLEDGER_HOME": str(tmp_path / "home")}


def grow(env, blocks: int) -> None:  # noqa: F811
    """Seal `blocks` more blocks, each over one journalled write (a prompt tuner registered)."""
    for _ in range(blocks):
        assert run_cli("tuner", "add", "AGT-902", str(uuid.uuid4()), env=env).code == 0
        assert run_cli("ledger", "seal", env=env).out.startswith("sealed block ")


def block_count(admin) -> int:
    return admin.execute("SELECT count(*) FROM evalledger.ledger_block").fetchone()[0]


def roll_back(admin, to: int) -> None:
    """The superuser deletes every block after `to` (the block table's guards lifted through the catalog)."""
    with triggers_lifted(admin, "ledger_block", "ledger_digest"):
        admin.execute("DELETE FROM evalledger.ledger_digest WHERE block_id > %s", (to,))
        admin.execute("DELETE FROM evalledger.ledger_block WHERE block_id > %s", (to,))


def fork(admin, at: int) -> None:
    """The superuser rewrites block `at`'s header and hash (as a reseal from it on would)."""
    with triggers_lifted(admin, "ledger_block"):
        admin.execute("UPDATE evalledger.ledger_block SET sealed_by = 'mallory', block_hash = sha256(block_hash) "
                      "WHERE block_id = %s", (at,))


@pytest.mark.parametrize("how", ["rolled back to N-3", "forked at N"])
@pytest.mark.parametrize("command", [("ledger", "verify"), ("report",), ("dashboard", "cost_per_run_v1")])
def test_a_reader_that_saw_n_blocks_refuses_a_rollback_or_a_fork(env, admin, reader, tmp_path, how, command):  # noqa: F811
    grow(env, 5)
    n = block_count(admin)
    seen = run_cli(*command, env=reader)
    assert seen.code == 0, seen.err
    remembered = list((tmp_path / "home" / "ledger").glob("*.json"))
    assert len(remembered) == 1 and json.loads(remembered[0].read_text())["ledger_size"] == n
    if how == "forked at N":
        fork(admin, n)
        says = f"the ledger forked: its first {n} blocks (of {n}) are not the {n} this reader saw"
    else:
        roll_back(admin, n - 3)
        says = f"the ledger was rolled back: it holds {n - 3} blocks, but this reader saw {n}"
    for extra in ((), ("--no-remember",)):
        refused = run_cli(*command, *extra, env=reader)
        assert (refused.code, refused.out) == (1, ""), refused.err
        assert refused.err.startswith("evalledger: error: ") and says in refused.err, refused.err
    # A reader with a home of its own saw nothing before, and reads.
    assert run_cli(*command, "--no-remember", env={**env, "EVALLEDGER_HOME": str(tmp_path / "fresh")}).code in (0, 1)
    assert not (tmp_path / "fresh" / "ledger").exists()


def test_a_reader_follows_a_ledger_that_grows(env, admin, reader, tmp_path):  # noqa: F811
    grow(env, 2)
    assert run_cli("ledger", "verify", env=reader).code == 0
    grow(env, 2)
    assert run_cli("ledger", "verify", "--no-remember", env=reader).code == 0
    path, = (tmp_path / "home" / "ledger").glob("*.json")
    assert json.loads(path.read_text())["ledger_size"] == block_count(admin) - 2
    assert run_cli("ledger", "verify", env=reader).code == 0
    assert json.loads(path.read_text())["ledger_size"] == block_count(admin)


def test_a_remembered_digest_with_a_key_twice_is_refused_as_any_digest_is(env, admin, reader, tmp_path):  # noqa: F811
    """The digest a reader remembers is read as a digest file is: a key given twice (which json
    would read as its last value) is refused in one line naming the file, exit 3."""
    grow(env, 1)
    assert run_cli("ledger", "verify", env=reader).code == 0
    path, = (tmp_path / "home" / "ledger").glob("*.json")
    path.write_text(path.read_text().replace("{", '{\n  "ledger_size": 0,', 1))
    refused = run_cli("ledger", "verify", env=reader)
    assert (refused.code, refused.out) == (3, ""), refused.err
    assert refused.err == (f"evalledger: error: {path}: the digest this reader remembers cannot be read (key "
                           "'ledger_size' appears twice): move it away to start remembering afresh\n")


@pytest.fixture
def key(tmp_path) -> tuple[Path, Path]:
    """An SSH key pair of the auditor's and an allowed_signers file naming it for digests."""
    private = tmp_path / "auditor_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "auditor", "-f", str(private)], check=True)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f'auditor@example.com namespaces="{check.SIGNATURE_NAMESPACE}" '
                       f"{(tmp_path / 'auditor_key.pub').read_text()}")
    return private, allowed


def test_a_signed_digest_verifies_with_ssh_keygen_and_one_byte_changed_fails(env, key, tmp_path):  # noqa: F811
    private, allowed = key
    grow(env, 1)
    signed = run_cli("ledger", "digest", "--out", str(tmp_path / "d.json"), "--sign", str(private), env=env)
    assert signed.code == 0 and f"signed in {tmp_path / 'd.json.sig'}" in signed.out, signed.err
    assert "a digest certifies the block headers" in signed.err
    done = standalone_check(tmp_path, "--allowed-signers", allowed, tmp_path / "d.json")
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    # ssh-keygen itself, as an auditor without evalledger checks it.
    by_hand = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", "auditor@example.com", "-n",
                              check.SIGNATURE_NAMESPACE, "-s", str(tmp_path / "d.json.sig")],
                             input=(tmp_path / "d.json").read_bytes(), capture_output=True)
    assert by_hand.returncode == 0, by_hand.stderr
    text = (tmp_path / "d.json").read_text()
    at = text.index('"ledger_root": "') + len('"ledger_root": "')
    (tmp_path / "d.json").write_text(text[:at] + ("1" if text[at] == "0" else "0") + text[at + 1:])
    changed = standalone_check(tmp_path, "--allowed-signers", allowed, tmp_path / "d.json")
    assert changed.returncode == 1 and "its signature does not verify" in changed.stdout, changed.stdout
    # A signature for another namespace (the same key, another purpose) is not a digest's.
    (tmp_path / "d.json").write_text(text)
    subprocess.run(["ssh-keygen", "-q", "-Y", "sign", "-f", str(private), "-n", "file", str(tmp_path / "e.json")],
                   check=False, capture_output=True)
    (tmp_path / "d.json.sig").unlink()
    missing = standalone_check(tmp_path, "--allowed-signers", allowed, tmp_path / "d.json")
    assert missing.returncode == 1 and "no signature" in missing.stdout


def test_sign_needs_out(env, key):  # noqa: F811
    refused = run_cli("ledger", "digest", "--sign", str(key[0]), env=env)
    assert refused.code == 3 and "give --out FILE too" in refused.err


def test_publish_appends_to_a_folder_and_commits_to_a_git_repository(env, admin, key, tmp_path):  # noqa: F811
    folder, repo = tmp_path / "digests", tmp_path / "repo"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for setting in (("user.email", "auditor@example.com"), ("user.name", "Auditor")):
        subprocess.run(["git", "-C", str(repo), "config", *setting], check=True)
    grow(env, 1)
    for dest in (folder, repo):
        first = run_cli("ledger", "publish", str(dest), "--sign", str(key[0]), env=env)
        assert first.code == 0 and first.out.startswith("published the digest of block "), first.err
    grow(env, 1)
    for dest in (folder, repo):
        later = run_cli("ledger", "publish", str(dest), env=env)
        assert later.code == 0 and ", extending digest-" in later.out, later.err
    assert len(list(folder.glob("digest-*.json"))) == 2 and len(list(folder.glob("digest-*.json.sig"))) == 1
    log = subprocess.run(["git", "-C", str(repo), "log", "--format=%s"], capture_output=True, text=True).stdout
    assert log.count("evalledger digest of block ") == 2
    for digest in folder.glob("digest-*.json"):
        assert check.check_digest(json.loads(digest.read_text())) == []
    # Rolled back below the newest published: nothing is published, exit 1, both sizes named.
    n = block_count(admin)
    roll_back(admin, n - 1)
    refused = run_cli("ledger", "publish", str(folder), env=env)
    assert refused.code == 1 and refused.out.startswith("inconsistent: "), refused.out + refused.err
    assert f"{n} blocks" in refused.out
    assert len(list(folder.glob("digest-*.json"))) == 2


def test_watch_publishes_until_the_ledger_is_inconsistent(env, admin, key, tmp_path):  # noqa: F811
    folder = tmp_path / "watched"
    folder.mkdir()
    grow(env, 3)
    watched = run_cli("ledger", "watch", str(folder), "--every", "1s", "--times", "2", "--sign", str(key[0]), env=env)
    assert watched.code == 0 and watched.out.count("published the digest of block ") == 2, watched.err
    assert len(list(folder.glob("digest-*.json.sig"))) == 2
    roll_back(admin, block_count(admin) - 2)
    caught = run_cli("ledger", "watch", str(folder), "--every", "1s", "--times", "5", env=env)
    assert caught.code == 1 and caught.out.startswith("inconsistent: rolled back"), caught.out + caught.err
    assert run_cli("ledger", "watch", str(folder), "--every", "soon", env=env).code == 3


@pytest.mark.parametrize("how", ["rolled back", "forked"])
def test_consistency_exits_1_for_a_rollback_or_fork_whichever_way_given(env, admin, tmp_path, how):  # noqa: F811
    grow(env, 2)
    old = digest_to(env, tmp_path / "old.json")
    grow(env, 2)
    new = digest_to(env, tmp_path / "new.json")
    backwards = run_cli("ledger", "consistency", str(tmp_path / "new.json"), str(tmp_path / "old.json"), env=env)
    assert backwards.code == 0 and backwards.out.startswith(
        f"consistent: the ledger of {new['ledger_size']} blocks ({tmp_path / 'new.json'}) extends the ledger of "
        f"{old['ledger_size']} blocks ({tmp_path / 'old.json'})"), backwards.out
    if how == "rolled back":
        roll_back(admin, old["ledger_size"])
    else:
        fork(admin, old["ledger_size"])
    for order in ((tmp_path / "old.json", tmp_path / "new.json"), (tmp_path / "new.json", tmp_path / "old.json")):
        result = run_cli("ledger", "consistency", *map(str, order), env=env)
        assert result.code == 1 and result.out.startswith(f"inconsistent: {how}"), result.out + result.err
        assert f"{old['ledger_size']} blocks" in result.out and f"{new['ledger_size']} blocks" in result.out
