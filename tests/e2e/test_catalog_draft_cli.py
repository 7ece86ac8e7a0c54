"""`evalledger catalog draft --from-capture` (issue 40, item 2) end to end: a draft from 1,000
captured rows is deterministic, holds no near-duplicates, never picks a row whose scrubbing
failed, spreads its questions over the strata, prefers what replay flagged, is refused by `catalog
load` while a blank is left, and once filled loads with its provenance, which `catalog show` prints."""

from __future__ import annotations

import itertools
import json
import random
import uuid
from datetime import timedelta
from pathlib import Path

from evalledger.suites.brain_eval import drafting
from tests.cli import run_cli
from tests.conftest import capture_times_since

FIXTURE = Path(__file__).parents[2] / "runner/evalledger/suites/replay/fixtures/captured_demo.jsonl"
INSERT = ("INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, retrieved_chunk_ids, source_ids,"
          " expand_enabled, detail, detail_resolved, vector_enabled, expansion_applied, latency_ms, remote,"
          " capture_key, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)")
# Sixty questions, no two of them near-duplicates in any spelling variant() makes (the most similar
# pair, typos included, scores 0.743).
SUBJECTS = ["acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne enterprises", "wonka", "cyberdyne",
            "tyrell"]
ASKS = ["renewals at risk for {}", "why did {} churn last quarter", "expansion signals at {}",
        "open support tickets of {}", "pricing discount history of {} by plan", "qbr summary for {}"]
LEAK = "unscrubbed leak of a customer secret"


STRATA = [("query", d, r) for d in (None, "low", "medium", "high") for r in (True, False)] + \
    [("search", None, True), ("search", None, False)]


def variant(text: str, rng: random.Random) -> str:
    """The same question as another caller types it: case, punctuation, spacing, an accent, a typo."""
    return rng.choice([text, text.upper(), text.capitalize() + "?", f"  {text}!! ", text.replace("e", "é", 1),
                       text.replace(" ", "  "), f"{text}.", text[:-1], text + "s"])


def capture_traffic(admin, rows: int = 1000, seed: int = 40) -> dict:
    """rows captured rows of 60 questions, six in each of the ten strata (tool, detail, remote), each
    asked in many spellings; plus 50 rows of one remote query whose scrubbing failed. Returns the
    ids of those, each eligible row's question and the window's end."""
    rng = random.Random(seed)
    since = capture_times_since(admin, 30)
    questions = [ask.format(s) for ask, s in itertools.product(ASKS, SUBJECTS)]
    values, asked = [], {}
    for i in range(rows):
        n = rng.randrange(len(questions))
        tool, detail, remote = STRATA[n % len(STRATA)]
        slugs = rng.sample(["accounts/acme", "playbooks/renewal-risk", "docs/pricing", "tickets/4411"], rng.randint(0, 3))
        key = uuid.uuid4()
        if slugs:
            asked[key] = questions[n]
        values.append((tool, variant(questions[n], rng), slugs, list(range(len(slugs) * 2)),
                       ["crm"] if slugs else [], True if tool == "query" else None, detail, detail, True, False,
                       40.0 + i % 7, remote, key, since + timedelta(seconds=i)))
    leaked = []
    for i in range(50):
        key = uuid.uuid4()
        leaked.append(key)
        values.append(("query", LEAK, ["accounts/acme"], [1], ["crm"], True, "high", "high", True, False, 40.0,
                       True, key, since + timedelta(seconds=rows + i)))
    with admin.cursor() as cur:
        cur.executemany(INSERT, values)
        cur.executemany("INSERT INTO evalledger.eval_capture_failures (failure_key, reason, occurred_at, tool_name, "
                        "capture_key) VALUES (gen_random_uuid(), 'scrubber_exception', now(), 'query', %s)",
                        [(k,) for k in leaked])
    ids = [r[0] for r in admin.execute("SELECT id FROM evalledger.eval_candidates WHERE capture_key = ANY(%s)",
                                       (leaked,))]
    question_of = {cid: asked[key] for cid, key in admin.execute(
        "SELECT id, capture_key FROM evalledger.eval_candidates WHERE capture_key = ANY(%s)", (list(asked),))}
    until = since + timedelta(seconds=rows + 100)
    return {"leaked": set(ids), "until": until.isoformat(), "question_of": question_of}


def draft(dsn: str, out: Path, *args: str):
    return run_cli("catalog", "draft", "--from-capture", "-o", str(out), *args, env={"DATABASE_URL": dsn})


def fill(doc: dict) -> dict:
    """Every blank written as a person would."""
    for q in doc["questions"]:
        q["type"] = "qbr_narrative"
        q["pass_criteria"] = {"max_hallucinations": 0, "min_citation_rate": 0.9,
                              "expected_findings": [f"names what production asked: {q['text'].strip()}"]}
    return doc


def test_a_draft_of_1000_rows_is_deterministic_folded_stratified_and_never_unscrubbed(dsn, admin, tmp_path):
    made = capture_traffic(admin)
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    result = draft(dsn, first, "--until", made["until"], "--questions", "30")
    assert result.code == 0, result.err
    assert draft(dsn, second, "--until", made["until"], "--questions", "30").code == 0
    assert first.read_bytes() == second.read_bytes()
    # The session's time zone changes nothing: every time is written in UTC.
    zoned = tmp_path / "zoned.json"
    assert run_cli("catalog", "draft", "--from-capture", "-o", str(zoned), "--until", made["until"],
                   env={"DATABASE_URL": dsn, "PGTZ": "Pacific/Chatham"}).code == 0
    assert zoned.read_bytes() == first.read_bytes()
    doc = json.loads(first.read_text())
    questions = doc["questions"]
    assert len(questions) == 30 and doc["schema_version"] == 1
    # No near-duplicates: every pair's similarity, by the documented rule, is under the threshold.
    keys = [drafting.normalise(q["text"]) for q in questions]
    for a, b in itertools.combinations(keys, 2):
        assert drafting.similarity(a, b) < drafting.SIMILAR_AT, (a, b)
    assert len(set(keys)) == 30
    # Never a row whose scrubbing failed, though it is the most asked remote query of the window.
    assert all(q["text"] != LEAK for q in questions)
    listed = {c["id"] for q in questions for c in q["provenance"]["captures"]}
    assert not listed & made["leaked"]
    # Folded: every spelling of a question (case, accents, punctuation, a typo) is one question,
    # standing for every row that asked it, and for no other.
    question_of = made["question_of"]
    for q in questions:
        base = question_of[q["provenance"]["captures"][0]["id"]]
        rows = [cid for cid, asked in question_of.items() if asked == base]
        assert q["provenance"]["captured"] == len(rows), base
        assert {c["id"] for c in q["provenance"]["captures"]} <= set(rows)
        assert len(q["provenance"]["captures"]) == min(len(rows), drafting.MAX_CAPTURES)
    # Stratified: each of the ten strata (tool, detail, remote) has three of the 30 questions.
    strata = doc["drafted_from"]["strata"]
    assert strata == {f"{t}/{d or 'none'}/{'remote' if r else 'local'}": 3 for t, d, r in STRATA}
    for q in questions:
        p = q["provenance"]
        assert f"{p['tool_name']}/{p['detail'] or 'none'}/{'remote' if p['remote'] else 'local'}" in strata
        assert [s["title"] for s in q["sources"]] and all(s["id"] for s in q["sources"])
        assert q["type"].startswith(drafting.BLANK)
    # Within a stratum, remote callers' strata come first in each round, and its most asked question first.
    assert questions[0]["provenance"]["remote"]
    # What the brain retrieved is each question's sources.
    cid = questions[0]["provenance"]["captures"][0]["id"]
    slugs = admin.execute("SELECT retrieved_slugs FROM evalledger.eval_candidates WHERE id = %s", (cid,)).fetchone()[0]
    assert [s["title"] for s in questions[0]["sources"]] == slugs
    # Read: the window's rows that retrieved something, but those whose scrubbing failed.
    assert f"30 questions from {len(question_of)} captured rows" in result.out


def test_load_refuses_a_draft_until_its_blanks_are_filled_then_keeps_its_provenance(dsn, admin, tmp_path):
    made = capture_traffic(admin, rows=200, seed=7)
    path = tmp_path / "draft.json"
    assert draft(dsn, path, "--until", made["until"], "--questions", "12", "--catalog-version", "cap-2026w49").code == 0
    refused = run_cli("catalog", "load", str(path), env={"DATABASE_URL": dsn})
    assert refused.code == 3
    lines = refused.err.strip().splitlines()
    assert len(lines) == 1, refused.err
    assert str(path) in lines[0] and "question CAP-Q001" in lines[0] and "$.questions[0].type" in lines[0]
    assert "48 blanks left" in lines[0] and "nothing loaded" in lines[0]
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_catalog").fetchone()[0] == 0
    # One blank left is still refused, naming it.
    doc = fill(json.loads(path.read_text()))
    doc["questions"][5]["pass_criteria"]["min_citation_rate"] = "FILL IN: a number"
    path.write_text(json.dumps(doc))
    refused = run_cli("catalog", "load", str(path), env={"DATABASE_URL": dsn})
    assert refused.code == 3 and "question CAP-Q006" in refused.err
    assert "$.questions[5].pass_criteria.min_citation_rate" in refused.err and "1 blank left" in refused.err
    doc["questions"][5]["pass_criteria"]["min_citation_rate"] = 0.8
    path.write_text(json.dumps(doc, indent=2))
    loaded = run_cli("catalog", "load", str(path), env={"DATABASE_URL": dsn})
    assert loaded.code == 0, loaded.err
    stored = admin.execute("SELECT question_id, position, capture_id, capture_created_at "
                           "FROM evalledger.brain_eval_catalog_provenance WHERE catalog_version = 'cap-2026w49' "
                           "ORDER BY question_id, position").fetchall()
    expected = [(q["id"], n, c["id"]) for q in doc["questions"] for n, c in enumerate(q["provenance"]["captures"], 1)]
    assert [r[:3] for r in stored] == expected
    # Each provenance row names a captured row of the ledger, by its key.
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_catalog_provenance p "
                         "JOIN evalledger.eval_candidates c ON (c.created_at, c.id) = (p.capture_created_at, p.capture_id)"
                         ).fetchone()[0] == len(expected)
    shown = run_cli("catalog", "show", "cap-2026w49", env={"DATABASE_URL": dsn})
    assert shown.code == 0, shown.err
    first = doc["questions"][0]["provenance"]
    assert f"drawn from: {first['captured']} captured row" in shown.out
    assert f"capture {first['captures'][0]['id']} (" in shown.out
    one = json.loads(run_cli("catalog", "show", "cap-2026w49", "CAP-Q001", "--json", env={"DATABASE_URL": dsn}).out)
    assert [c["id"] for c in one["provenance"]["captures"]] == [c["id"] for c in first["captures"]]
    assert one["provenance"]["captured"] == first["captured"]
    # The journal holds the provenance rows as the ledger wrote them: sealed, verify finds nothing.
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    assert run_cli("ledger", "seal", env=env).code == 0
    verified = run_cli("ledger", "verify", "--json", env=env)
    assert verified.code == 0 and json.loads(verified.out)["findings"] == [], verified.out + verified.err


def test_replay_flagged_queries_come_first(dsn, admin, tmp_path):
    """Queries a replay run found drifting (a lost source, a low recall) are drafted before the rest."""
    assert run_cli("capture", "import", str(FIXTURE), env={"DATABASE_URL": dsn}).code == 0
    replayed = run_cli("run", "replay", "--brain-version", "v2-no-wiki", "--python",
                       "evalledger.suites.replay.example_brain:without_wiki", env={"DATABASE_URL": dsn})
    assert replayed.code == 1, replayed.err
    flagged = {r[0] for r in admin.execute("SELECT capture_id FROM evalledger.replay_query "
                                           "WHERE cardinality(sources_lost) > 0 OR recall < 0.5")}
    assert 0 < len(flagged) < 9
    path = tmp_path / "d.json"
    assert draft(dsn, path, "--questions", "3").code == 0
    doc = json.loads(path.read_text())
    assert all(q["provenance"]["flagged_by_replay"] for q in doc["questions"])
    assert {q["provenance"]["captures"][0]["id"] for q in doc["questions"]} <= flagged
    # Without replay's flags (only its unflagged rows), nothing is marked.
    local = tmp_path / "l.json"
    assert draft(dsn, local, "--local", "--tool", "search").code == 0
    assert [q["provenance"]["flagged_by_replay"] for q in json.loads(local.read_text())["questions"]] == [False]


def test_bad_requests_are_refused_before_anything_is_written(dsn, tmp_path):
    path = tmp_path / "x.json"
    for args, words in (([], "no captured row to draft from"),
                        (["--since", "2026-01-02", "--until", "2026-01-01"], "is not before --until"),
                        (["--questions", "1000"], "at most 999"),
                        (["--catalog-version", "bad version"], "--catalog-version")):
        result = draft(dsn, path, *args)
        assert result.code == 3 and words in result.err, (args, result.err)
        assert not path.exists()
    result = run_cli("catalog", "draft", "-o", str(path), env={"DATABASE_URL": dsn})
    assert result.code == 3 and "--from-capture" in result.err
