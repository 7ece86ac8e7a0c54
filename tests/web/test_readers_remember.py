"""serve's readers' pages remember the newest digest they saw (issue 35, item 4): a page read once, the
ledger then rolled back or forked by the superuser, is refused (409) naming both sizes; a reviewer's pages
need no ledger privilege for it, and --no-remember (remember=False) keeps nothing."""

from __future__ import annotations

import pytest

from evalledger.ledger import digest
from tests.ledger_forge import triggers_lifted

AUDITOR = "evalledger_test_web_auditor"


def seal_blocks(admin, count: int) -> int:
    for n in range(count):
        admin.execute("INSERT INTO evalledger.target (target_id, kind, display_name) VALUES (%s, 'bot', 'web')",
                      (f"AGT-W{n}-{admin.execute('SELECT count(*) FROM evalledger.ledger_block').fetchone()[0]}",))
        digest.seal(admin, 0)
    return admin.execute("SELECT count(*) FROM evalledger.ledger_block").fetchone()[0]


@pytest.mark.parametrize("how", ["rolled back", "forked"])
def test_a_readers_page_refuses_a_ledger_rolled_back_or_forked(web, serve, client, monkeypatch, tmp_path, how):
    monkeypatch.setenv("EVALLEDGER_HOME", str(tmp_path / "home"))
    n = seal_blocks(web.admin, 4)
    base = serve()
    auditor = client(base)
    assert auditor.sign_in(AUDITOR).status_code == 303
    assert auditor.http.get("/runs").status_code == 200
    assert list((tmp_path / "home" / "ledger").glob("*.json"))
    with triggers_lifted(web.admin, "ledger_block", "ledger_digest"):
        if how == "rolled back":
            web.admin.execute("DELETE FROM evalledger.ledger_digest WHERE block_id > %s", (n - 3,))
            web.admin.execute("DELETE FROM evalledger.ledger_block WHERE block_id > %s", (n - 3,))
            says = f"it holds {n - 3} block{'' if n - 3 == 1 else 's'}, but this reader saw {n}"
        else:
            web.admin.execute("UPDATE evalledger.ledger_block SET block_hash = sha256(block_hash) WHERE block_id = %s",
                              (n,))
            says = f"its first {n} blocks (of {n}) are not the {n} this reader saw"
    for page in ("/runs", "/dashboards", f"/runs/{web.completed_a}"):
        refused = auditor.http.get(page)
        assert refused.status_code == 409 and says in refused.text, (page, refused.status_code)
    # A throwaway server (--no-remember) with a home of its own saw nothing before: it reads, and keeps nothing.
    monkeypatch.setenv("EVALLEDGER_HOME", str(tmp_path / "fresh"))
    fresh = client(serve(remember=False))
    assert fresh.sign_in(AUDITOR).status_code == 303
    assert fresh.http.get("/runs").status_code == 200
    assert not (tmp_path / "fresh" / "ledger").exists()
