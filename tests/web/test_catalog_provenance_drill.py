"""The auditor's drill-down from a catalog question to the production traffic it was drafted from
(issue 40, item 2), over raw HTTP: each listed capture as the reader's tier shows it (an auditor
every retained row, RevOps the hot tier), a question written by hand saying so, and a reviewer
refused as on every reader's page."""

from __future__ import annotations

import copy
import json
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from evalledger.suites.brain_eval import catalog
from evalledger.web.app import create_app
from tests.conftest import REVIEWER_ROLE, ensure_login_role, make_capture_partition
from tests.web.conftest import AUDITOR_ROLE, Served

REVOPS_ROLE = "evalledger_test_web_revops"
INSERT = ("INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, retrieved_chunk_ids, source_ids,"
          " expand_enabled, detail, detail_resolved, vector_enabled, expansion_applied, latency_ms, remote,"
          " capture_key, created_at) VALUES ('query', %s, '{accounts/acme}', '{1}', '{crm}', true, 'medium', 'medium',"
          " true, false, 42.5, true, %s, %s) RETURNING id, created_at")


def at_z(value: datetime) -> str:
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.fixture(scope="module")
def served(module_dsn, web_admin, web_reviewers):
    """The demo catalog loaded as a draft whose EVAL-Q01 came from two captured rows: one of this
    hour, one 25 months old (the cold tier), and one listed capture this ledger never held."""
    admin = web_admin
    ensure_login_role(admin, REVOPS_ROLE, "evalledger_revops")
    now = datetime.now(timezone.utc).replace(microsecond=0)
    old = (now - timedelta(days=31 * 25)).replace(day=3)
    for when in (now, old):
        make_capture_partition(admin, when.date().replace(day=1))
    hot = admin.execute(INSERT, ("renewals at risk for acme", uuid.uuid4(), now - timedelta(minutes=5))).fetchone()
    cold = admin.execute(INSERT, ("acme renewal risk, two years on", uuid.uuid4(), old)).fetchone()
    document = copy.deepcopy(json.loads(catalog.demo_catalog_path().read_text("utf-8")))
    document["version"] = "cap-drill"
    document["questions"][0]["provenance"] = {
        "captures": [{"id": hot[0], "created_at": at_z(hot[1])}, {"id": cold[0], "created_at": at_z(cold[1])},
                     {"id": 987654321, "created_at": "2026-01-01T00:00:00Z"}],
        "captured": 5}
    admin.execute("SET ROLE evalledger_owner")
    try:
        catalog.load(admin, document, None)
    finally:
        admin.execute("RESET ROLE")
    app = Served(create_app(module_dsn))
    try:
        yield app.base, hot[0], cold[0]
    finally:
        app.stop()


def test_an_auditor_follows_a_question_to_every_capture_it_came_from(served, client):
    base, hot, cold = served
    auditor = client(base)
    assert auditor.sign_in(AUDITOR_ROLE).status_code == 303
    page = auditor.http.get("/read/catalogs/cap-drill/questions/EVAL-Q01")
    assert page.status_code == 200, page.text
    assert "Drafted from 5 captured production rows" in page.text
    assert f'id="capture-{hot}"' in page.text and "renewals at risk for acme" in page.text
    assert f'id="capture-{cold}"' in page.text and "acme renewal risk, two years on" in page.text
    assert 'id="capture-987654321"' in page.text and "not a row you may read here" in page.text
    # A question written by hand says so; one that is not there is not found.
    assert "Written by hand" in auditor.http.get("/read/catalogs/cap-drill/questions/EVAL-Q02").text
    missing = auditor.http.get("/read/catalogs/cap-drill/questions/EVAL-Q99")
    assert missing.status_code == 404 and "no question EVAL-Q99 in catalog cap-drill" in missing.text


def test_revops_reads_the_hot_tier_of_it_and_a_reviewer_nothing(served, client):
    base, hot, cold = served
    revops = client(base)
    assert revops.sign_in(REVOPS_ROLE).status_code == 303
    page = revops.http.get("/read/catalogs/cap-drill/questions/EVAL-Q01").text
    assert "renewals at risk for acme" in page
    assert f'id="capture-{cold}"' in page and "acme renewal risk, two years on" not in page
    reviewer = client(base)
    assert reviewer.sign_in(REVIEWER_ROLE).status_code == 303
    refused = reviewer.http.get("/read/catalogs/cap-drill/questions/EVAL-Q01")
    assert refused.status_code == 403 and "is not a reader" in refused.text
