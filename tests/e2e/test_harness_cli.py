"""The harness commands as an operator uses them: catalog load, list and show; brain add, list, show."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from evalledger.suites.brain_eval import catalog
from tests.cli import run_cli

DEMO_TEXT = catalog.demo_catalog_path().read_text("utf-8")
DEMO = json.loads(DEMO_TEXT)


@pytest.fixture
def env(dsn):
    return {"DATABASE_URL": dsn}


@pytest.fixture
def demo_file(tmp_path):
    path = tmp_path / "catalog_v28-2026Q2.json"
    path.write_text(DEMO_TEXT)
    return path


def test_load_list_show_the_demo_catalog(env, demo_file):
    loaded = run_cli("catalog", "load", str(demo_file), env=env)
    assert loaded.code == 0, loaded.err
    assert loaded.out.startswith("loaded catalog v28-2026Q2: 30 questions (5 stale-fixture, 8 of 8 types), sha256 ")
    sha = loaded.out.split("sha256 ")[1].strip()

    again = run_cli("catalog", "load", str(demo_file), env=env)
    assert (again.code, again.out) == (
        0, f"already loaded, unchanged: catalog v28-2026Q2: 30 questions (5 stale-fixture, 8 of 8 types), sha256 {sha}\n")

    listed = run_cli("catalog", "list", env=env)
    assert listed.code == 0
    [line] = listed.out.splitlines()
    assert line.startswith("v28-2026Q2        30 questions   5 stale-fixture  8 types  loaded ")
    assert line.endswith(f"sha256 {sha[:12]}")

    shown = run_cli("catalog", "show", "v28-2026Q2", env=env)
    assert shown.code == 0
    assert shown.out.count("STALE FIXTURE") == 5
    assert [l.split()[0] for l in shown.out.splitlines() if l.startswith("EVAL-")] == [q["id"] for q in DEMO["questions"]]
    q3 = DEMO["questions"][2]
    block = shown.out.split("EVAL-Q03  ")[1].split("\nEVAL-Q04")[0]
    assert block.startswith("plan_diagnosis  STALE FIXTURE\n")
    assert f"  {q3['text']}\n" in block
    assert "  sources: " + ", ".join(
        s["id"] + (f" (as of {s['as_of']}, stale)" if s.get("stale") else "") for s in q3["sources"]) in block
    assert ("  passes when: hallucinations <= 0, citation rate >= 0.9, diagnosis accuracy >= 0.5, "
            "narrative coherence >= 3\n") in block
    assert all(f"  expects: {f}" in block for f in q3["pass_criteria"]["expected_findings"])


def test_show_json_gives_back_the_document_and_one_question(env, demo_file):
    run_cli("catalog", "load", str(demo_file), env=env)
    whole = run_cli("catalog", "show", "v28-2026Q2", "--json", env=env)
    assert json.loads(whole.out) == DEMO
    one = run_cli("catalog", "show", "v28-2026Q2", "EVAL-Q30", "--json", env=env)
    assert json.loads(one.out) == DEMO["questions"][29]
    missing = run_cli("catalog", "show", "v28-2026Q2", "EVAL-Q31", env=env)
    assert (missing.code, missing.err) == (3, "evalledger: error: catalog v28-2026Q2 has no question EVAL-Q31\n")
    unknown = run_cli("catalog", "show", "v1", env=env)
    assert (unknown.code, unknown.err) == (3, "evalledger: error: no catalog v1 is loaded (evalledger catalog list)\n")


def test_bad_file_is_refused_whole_and_nothing_is_written(env, tmp_path):
    bad = json.loads(DEMO_TEXT)
    bad["questions"][29]["type"] = "qbr"
    bad["questions"][1]["uses_stale_fixture"] = True
    path = tmp_path / "bad.json"
    text = json.dumps(bad, indent=2)
    path.write_text(text)
    refused = run_cli("catalog", "load", str(path), env=env)
    assert refused.code == 3 and refused.out == ""
    *problems, last = refused.err.splitlines()
    assert last == f"evalledger: error: {path}: catalog refused, nothing loaded (2 problems, listed above)"
    assert [p.split(": ")[1] for p in problems] == ["$.questions[1].uses_stale_fixture", "$.questions[29].type"]
    for problem in problems:
        number = int(problem[len(str(path)) + 1:].split(":")[0])
        key = problem.split(": ")[1].rsplit(".", 1)[1]
        assert f'"{key}"' in text.splitlines()[number - 1], problem
    assert run_cli("catalog", "list", env=env).out == "no catalog loaded (evalledger catalog load FILE)\n"


def test_not_json_and_missing_file(env, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "version": "v1",\n}\n')
    broken = run_cli("catalog", "load", str(path), env=env)
    assert broken.code == 3
    assert broken.err.splitlines()[0] == f"{path}:3: column 1: not JSON: Expecting property name enclosed in double quotes"
    gone = run_cli("catalog", "load", str(tmp_path / "gone.json"), env=env)
    assert (gone.code, gone.err) == (3, f"evalledger: error: {tmp_path / 'gone.json'}: no such catalog file\n")


def test_changed_content_under_a_loaded_version_is_refused(env, demo_file, tmp_path):
    run_cli("catalog", "load", str(demo_file), env=env)
    changed = json.loads(DEMO_TEXT)
    changed["questions"][0]["text"] = "Something else entirely?"
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(changed))
    refused = run_cli("catalog", "load", str(path), env=env)
    assert refused.code == 3
    assert refused.err.startswith("evalledger: error: catalog v28-2026Q2 is already loaded with other content")
    assert "give the changed one a new version" in refused.err
    changed["version"] = "v29-2026Q3"
    path.write_text(json.dumps(changed))
    assert run_cli("catalog", "load", str(path), env=env).code == 0
    assert [l.split()[0] for l in run_cli("catalog", "list", env=env).out.splitlines()] == ["v28-2026Q2", "v29-2026Q3"]


PROMPT = "You are the action brain.\nCite the source id of every number.\n"


def test_brain_add_list_show(env, tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(PROMPT)
    sha = hashlib.sha256(PROMPT.encode()).hexdigest()
    added = run_cli("brain", "add", "AGT-902", "--model", "anthropic:claude-sonnet-4-6", "--prompt-file", str(prompt),
                    "--label", "action_brain_v3", "--lever", "reprice", "--lever", "add_headcount", env=env)
    assert (added.code, added.out) == (0, (
        "registered AGT-902 version 1: anthropic:claude-sonnet-4-6  label action_brain_v3\n"
        f"  system_prompt_hash {sha}\n"
        "  levers add_headcount, reprice\n")), added.err
    again = run_cli("brain", "add", "AGT-902", "--model", "anthropic:claude-sonnet-4-6", "--prompt-file", str(prompt),
                    "--lever", "add_headcount", "--lever", "reprice", env=env)
    assert again.code == 0 and again.out.startswith("already registered: AGT-902 version 1: ")

    prompt.write_text(PROMPT + "Be brief.\n")
    changed = run_cli("brain", "add", "AGT-902", "--model", "anthropic:claude-sonnet-4-6", "--prompt-file", str(prompt),
                      env=env)
    assert changed.out.startswith("registered AGT-902 version 2: anthropic:claude-sonnet-4-6\n")
    assert "  levers none\n" in changed.out

    listed = run_cli("brain", "list", env=env)
    assert [l for l in listed.out.splitlines() if not l.startswith("  ")] == [
        "AGT-902 version 1: anthropic:claude-sonnet-4-6  label action_brain_v3",
        "AGT-902 version 2: anthropic:claude-sonnet-4-6"]
    shown = run_cli("brain", "show", "AGT-902", "action_brain_v3", env=env)
    assert shown.out.endswith("  system prompt:\n    You are the action brain.\n    Cite the source id of every number.\n")
    assert run_cli("brain", "show", "AGT-902", env=env).out.startswith("AGT-902 version 2:")


@pytest.mark.parametrize("args, message", [
    (["AGT-902", "--model", "claude-sonnet-4-6"], "malformed model spec 'claude-sonnet-4-6'"),
    (["AGT-902", "--model", "anthropic:m", "--lever", "Re-price"], "lever 'Re-price' is not an action_type name"),
    (["AGT-999", "--model", "anthropic:m"], "AGT-999 is not a registered brain"),
])
def test_brain_add_refusals(env, tmp_path, args, message):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(PROMPT)
    refused = run_cli("brain", "add", *args, "--prompt-file", str(prompt), env=env)
    assert refused.code == 3 and refused.err.startswith("evalledger: error: ") and message in refused.err, refused.err
    assert run_cli("brain", "list", env=env).out == "no brain versions registered (evalledger brain add)\n"


def test_empty_prompt_is_refused(env, tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(" \n")
    refused = run_cli("brain", "add", "AGT-902", "--model", "anthropic:m", "--prompt-file", str(prompt), env=env)
    assert (refused.code, refused.err) == (3, "evalledger: error: the system prompt is empty\n")


# -- contracts hash -----------------------------------------------------------------------------------

VIEWS = """
CREATE SCHEMA crm;
CREATE TABLE crm.accounts (account_id int PRIMARY KEY, name text, status text, arr numeric);
CREATE VIEW crm.v_active AS SELECT account_id, name FROM crm.accounts WHERE status = 'active';
CREATE VIEW crm.v_big AS SELECT account_id, arr FROM crm.accounts WHERE arr > 1000 ORDER BY arr DESC;
"""


@pytest.fixture
def crm(admin):
    admin.execute(VIEWS)
    return admin


def test_contracts_hash_from_live_views_and_from_files(env, crm, tmp_path):
    shown = run_cli("contracts", "hash", "--schema", "crm", env=env)
    assert shown.code == 0, shown.err
    first, source, count, *views = shown.out.splitlines()
    sha = first.removeprefix("brain_view_contracts_hash ")
    assert len(sha) == 64 and int(sha, 16) >= 0
    assert source.startswith("  source database ") and source.endswith(" schema crm (canon-v1)")
    assert count == "  2 views:"
    assert [v.split()[0] for v in views] == ["v_active", "v_big"]

    files = tmp_path / "views"
    files.mkdir()
    (files / "crm.sql").write_text(
        "-- what the brain reads\ncreate view crm.V_ACTIVE as select account_id, name from accounts\n"
        "  where (status = 'active');\n"
        "CREATE VIEW v_big AS SELECT accounts.account_id, arr FROM crm.accounts WHERE (arr > 1000::numeric)\n"
        "  ORDER BY arr DESC;\n")
    from_files = run_cli("contracts", "hash", "--dir", str(files), "--schema", "crm", "--json", env=env)
    assert from_files.code == 0, from_files.err
    document = json.loads(from_files.out)
    assert document["brain_view_contracts_hash"] == sha
    assert document["source"] == f"folder {files} schema crm" and document["canonical_form"] == "canon-v1"
    assert [v["name"] for v in document["views"]] == ["v_active", "v_big"]

    dumped = run_cli("contracts", "dump", str(tmp_path / "dumped"), "--schema", "crm", env=env)
    assert (dumped.code, dumped.out) == (0, f"wrote 2 view files to {tmp_path / 'dumped'}\n")
    again = run_cli("contracts", "hash", "--dir", str(tmp_path / "dumped"), "--schema", "crm", env=env)
    assert again.out.splitlines()[0] == first

    crm.execute("CREATE OR REPLACE VIEW crm.v_big AS SELECT account_id, arr FROM crm.accounts WHERE arr > 1000 "
                "ORDER BY arr")
    changed = run_cli("contracts", "hash", "--schema", "crm", env=env)
    assert changed.out.splitlines()[0] != first
    assert [l.split()[1] for l in changed.out.splitlines()[3:]] != [v.split()[1] for v in views]


@pytest.mark.parametrize("args, message", [
    ([], "give --schema (live views, at --views-url or the ledger's database) or --dir"),
    (["--schema", "nowhere"], "no views in schema nowhere at "),
    (["--dir", "DIR", "--views-url", "postgresql://x@/y"], "--dir and --views-url name two sources: give one"),
])
def test_contracts_hash_refusals(env, tmp_path, args, message):
    args = [str(tmp_path) if a == "DIR" else a for a in args]
    refused = run_cli("contracts", "hash", *args, env=env)
    assert refused.code == 3 and refused.err.startswith("evalledger: error: ") and message in refused.err, refused.err


def test_contracts_hash_names_the_bad_file(env, tmp_path):
    (tmp_path / "bad.sql").write_text("CREATE TABLE t (a int);\n")
    refused = run_cli("contracts", "hash", "--dir", str(tmp_path), env=env)
    assert (refused.code, refused.err) == (
        3, f"evalledger: error: {tmp_path / 'bad.sql'}: statement 1: not a CREATE VIEW ... AS query\n")


# -- run brain-eval ------------------------------------------------------------------------------------

from tests.conftest import REVIEWER_ROLE  # noqa: E402
from tests.standin import steps  # noqa: E402

BRAIN_PROMPT = "You are the action brain of RevOps. Cite the source id of every number you state.\n"
DEMO_LEVERS = ("add_pipeline_generation", "exec_sponsor_outreach", "expansion_offer", "rep_coaching", "save_play")
VIEW_FILE = "CREATE VIEW v_accounts AS SELECT account_id, name FROM accounts WHERE status = 'active';\n"


@pytest.fixture
def harness(env, reviewers, demo_file, tmp_path, monkeypatch):
    """The demo catalog loaded, AGT-902 registered with the demo levers, a folder of views; no API keys."""
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert run_cli("catalog", "load", str(demo_file), env=env).code == 0
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(BRAIN_PROMPT)
    levers = [arg for lever in DEMO_LEVERS for arg in ("--lever", lever)]
    added = run_cli("brain", "add", "AGT-902", "--model", "anthropic:claude-sonnet-4-6", "--prompt-file", str(prompt),
                    "--label", "action_brain_v3", *levers, env=env)
    assert added.code == 0, added.err
    views = tmp_path / "views"
    views.mkdir()
    (views / "accounts.sql").write_text(VIEW_FILE)
    return views


def run_args(views, *extra, answers="recorded", judges="recorded"):
    return ("run", "brain-eval", "--brain", "AGT-902", "--catalog", "v28-2026Q2", "--trigger", "quarterly",
            "--reviewer", REVIEWER_ROLE, "--views-dir", str(views), "--answers", answers, "--judges", judges, *extra)


def live_args(views, *extra):
    return run_args(views, *extra, answers="auto", judges="auto")


def test_recorded_run_stores_every_answer_with_its_automatic_scores(env, admin, harness):
    done = run_cli(*run_args(harness), env=env)
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    run_id = lines[0].split()[1]
    assert lines[0] == (f"run {run_id} (started): AGT-902 version 1 (anthropic:claude-sonnet-4-6), "
                        "catalog v28-2026Q2, 30 questions")
    assert lines[1].startswith("brain: recorded answers shipped with evalledger, not live calls")
    contracts_hash = run_cli("contracts", "hash", "--dir", str(harness), env=env).out.split()[1]
    assert lines[2] == f"contracts: {contracts_hash} (1 views, folder {harness})"
    assert lines[3] == "answers: 30 of 30 stored; 30 asked now, cost $0.0000"
    assert lines[4] == "  EVAL-Q24: breaks the answer contract: not a JSON document"
    assert lines[5].startswith("judges: recorded replies shipped with evalledger, not live calls")
    assert lines[6] == "suggestions: 87 drafted by 3 judges; 87 asked now, cost $0.0000"
    assert lines[7:] == []

    run = admin.execute("SELECT brain_under_test, model_id, system_prompt_hash, system_prompt_version_label, "
                        "brain_view_contracts_hash, question_catalog_version, question_count, run_trigger::text, "
                        "completed_at FROM brain_eval_log WHERE eval_run_id = %s", (run_id,)).fetchone()
    import hashlib
    assert run == ("AGT-902", "claude-sonnet-4-6", hashlib.sha256(BRAIN_PROMPT.encode()).hexdigest(), "action_brain_v3",
                   contracts_hash, "v28-2026Q2", 30, "quarterly", None)
    recorded_contracts, answers = admin.execute(
        "SELECT contracts, answers FROM brain_eval_harness_run WHERE eval_run_id = %s", (run_id,)).fetchone()
    assert answers == "recorded"
    assert recorded_contracts["source"] == f"folder {harness}"
    assert [v["name"] for v in recorded_contracts["views"]] == ["v_accounts"]

    scores = {r[0]: r[1:] for r in admin.execute(
        "SELECT a.question_id, a.recorded, a.contract_error, a.citation_rate::float, a.lever_mapping_violations, "
        "a.confidence_distribution, b.origin, b.sources_read FROM brain_eval_harness_answer a "
        "JOIN brain_analysis_log b USING (analysis_id) WHERE a.eval_run_id = %s", (run_id,))}
    assert len(scores) == 30
    third = 33.33
    assert scores["EVAL-Q01"][:5] == (True, None, 1.0, 0, {"high_confidence_pct": third, "multi_source_pct": third,
                                                          "inference_pct": third, "speculation_pct": 0})
    assert scores["EVAL-Q07"][2] == 0.5  # one of its two numerical claims cites a source it was not given
    assert scores["EVAL-Q18"][3] == 1  # one proposed action outside the levers
    assert scores["EVAL-Q24"][1:4] == ("not a JSON document", 0.0, 1)
    assert all(origin == "eval" for *_, origin, _ in scores.values())
    assert scores["EVAL-Q03"][6] == DEMO["questions"][2]["sources"]


def test_the_same_command_resumes_and_asks_nothing_twice(env, admin, harness):
    first = run_cli(*run_args(harness, "--questions", "EVAL-Q01,EVAL-Q02"), env=env)
    run_id = first.out.split()[1]
    again = run_cli(*run_args(harness, "--questions", "EVAL-Q01,EVAL-Q02"), env=env)
    assert again.code == 0
    assert again.out.splitlines()[0].startswith(f"run {run_id} (resumed): ")
    assert "answers: 2 of 2 stored (2 before this resumption); 0 asked now" in again.out
    assert admin.execute("SELECT count(*) FROM brain_analysis_log").fetchone()[0] == 2
    # Another run of the same brain, prompt and catalog is refused while this one is open, naming it
    # (docs/guards.md, section 31); once it is cancelled, the other starts.
    other = run_cli(*run_args(harness, "--questions", "EVAL-Q01"), env=env)
    assert other.code == 3 and f"run {run_id} of AGT-902" in other.err and "is open" in other.err, other.err
    assert run_cli("brain-eval", "cancel", run_id, "--reason", "asked the wrong questions", env=env).code == 1
    other = run_cli(*run_args(harness, "--questions", "EVAL-Q01"), env=env)
    assert other.out.split()[1] != run_id and "(started)" in other.out


def test_live_answers_through_the_stand_in(env, admin, harness, standin, monkeypatch):
    standin.install_env(monkeypatch)
    answer = {"narrative": "EMEA is at 71% of plan.", "proposed_actions": [{"action_type": "rep_coaching",
                                                                            "description": "coach"}],
              "claims": [{"text": "attainment 71%", "numerical": True, "source_ids": ["quota_attainment_emea"],
                          "confidence": "high"},
                         {"text": "coverage 2.1x", "numerical": True, "source_ids": ["nowhere"],
                          "confidence": "speculation"}]}
    drafts = {"gpt-4o": {"total_claims": 2, "unsupported_claims": ["coverage 2.1x"], "diagnosis_accuracy": 1,
                         "staleness_recognised": None, "notes": "One claim cites nothing given."},
              "claude-opus-4-7": {"total_claims": 2, "unsupported_claims": [], "diagnosis_accuracy": 0.5,
                                  "staleness_recognised": None, "notes": "Fine."},
              "gemini-1.5-pro": {"total_claims": 3, "unsupported_claims": ["coverage 2.1x"], "diagnosis_accuracy": 2,
                                 "staleness_recognised": None, "notes": "Out of scale on purpose."}}
    standin.responder = lambda model, system, user: answer if model == "claude-sonnet-4-6" else drafts[model]
    standin.script("claude-sonnet-4-6", steps.ok(usage=(1000, 200)), steps.text("Sorry, no JSON today."))
    done = run_cli(*live_args(harness, "--questions", "EVAL-Q01,EVAL-Q02", "--concurrency", "1"), env=env)
    assert done.code == 0, done.err
    assert "brain: recorded" not in done.out
    assert "  EVAL-Q02: breaks the answer contract: not a JSON document" in done.out
    requests = standin.requests_for("claude-sonnet-4-6")
    assert len(requests) == 2
    assert requests[0].system == BRAIN_PROMPT
    assert DEMO["questions"][0]["text"] in requests[0].user
    assert all(f"[{s['id']}]" in requests[0].user for s in DEMO["questions"][0]["sources"])
    assert requests[0].schema is not None
    row = admin.execute(
        "SELECT b.output, b.input_tokens, b.output_tokens, a.recorded, a.citation_rate::float, "
        "a.lever_mapping_violations, a.confidence_distribution, a.attempts FROM brain_eval_harness_answer a "
        "JOIN brain_analysis_log b USING (analysis_id) WHERE a.question_id = 'EVAL-Q01'").fetchone()
    assert row == ("EMEA is at 71% of plan.", 1000, 200, False, 0.5, 0,
                   {"high_confidence_pct": 50, "multi_source_pct": 0, "inference_pct": 0, "speculation_pct": 50}, 1)
    # The judges read only the contract-keeping answer; each keeps its own draft, disagreement and all.
    judged = admin.execute("SELECT model, same_family, contributes, total_claims, unsupported_claims, "
                           "diagnosis_accuracy::float, error_kind FROM brain_eval_judge_suggestion "
                           "WHERE question_id = 'EVAL-Q01' ORDER BY model").fetchall()
    assert judged == [("anthropic:claude-opus-4-7", True, True, 2, [], 0.5, None),
                      ("google:gemini-1.5-pro", False, False, None, None, None, "out_of_scale"),
                      ("openai:gpt-4o", False, True, 2, ["coverage 2.1x"], 1.0, None)]
    assert admin.execute("SELECT count(*) FROM brain_eval_judge_suggestion WHERE question_id = 'EVAL-Q02'").fetchone() == (0,)
    assert "suggestions: 2 drafted by 3 judges, 1 failed; 3 asked now" in done.out
    assert "  EVAL-Q01 google:gemini-1.5-pro: out_of_scale: " in done.out
    judge_request = standin.requests_for("gpt-4o")[0]
    assert "EMEA is at 71% of plan." in judge_request.user and DEMO["questions"][0]["text"] in judge_request.user


def test_a_runs_calls_share_a_byte_identical_prefix_marked_for_the_providers_caches(env, admin, harness, standin,
                                                                                    monkeypatch):
    """What a run's calls share (the system text, the output schema, the brain's instructions) is
    byte-identical across its calls and comes first, the item last; Anthropic's requests mark it
    with cache_control, OpenAI's carry one prompt_cache_key (issue 38, item 2). The questions differ
    in what the judges are asked of them (a diagnosis or not, a stale source or not): that is in the
    item, not in the shared prefix."""
    import os.path

    standin.install_env(monkeypatch)
    answer = {"narrative": "EMEA is at 71% of plan.", "proposed_actions": [],
              "claims": [{"text": "attainment 71%", "numerical": True, "source_ids": ["quota_attainment_emea"],
                          "confidence": "high"}]}
    draft = {"total_claims": 1, "unsupported_claims": [], "diagnosis_accuracy": None, "staleness_recognised": None,
             "notes": "Fine."}
    standin.responder = lambda model, system, user: answer if model == "claude-sonnet-4-6" else draft
    questions = ["EVAL-Q01", "EVAL-Q03", "EVAL-Q21", "EVAL-Q30"]
    done = run_cli(*live_args(harness, "--questions", ",".join(questions)), env=env)
    assert done.code == 0, done.err
    texts = {q["id"]: q["text"] for q in DEMO["questions"]}

    brain = standin.requests_for("claude-sonnet-4-6")
    assert len(brain) == len(questions)
    shared = [{k: v for k, v in r.body.items() if k != "messages"} for r in brain]
    assert all(body == shared[0] for body in shared)
    assert shared[0]["system"] == [{"type": "text", "text": BRAIN_PROMPT, "cache_control": {"type": "ephemeral"}}]
    users = [r.user for r in brain]
    instructions = os.path.commonprefix(users)
    assert "Reply with one JSON document" in instructions and "Sources:\n" in instructions
    assert not any(texts[q] in instructions for q in questions)
    assert sorted(u.rsplit("Question: ", 1)[1] for u in users) == sorted(texts[q] + "\n" for q in questions)

    for model in ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro"):
        judged = standin.requests_for(model)
        assert len(judged) == len(questions), model
        heads = []
        for r in judged:
            body = dict(r.body)
            messages = body.pop("messages")
            # The only message after the shared prefix is the item: the question, its sources, the answer.
            assert messages[-1]["role"] == "user" and messages[-1]["content"] == r.user
            heads.append((body, messages[:-1]))
        assert all(head == heads[0] for head in heads), model
        assert len({r.user for r in judged}) == len(questions)
        if model == "claude-opus-4-7":
            assert heads[0][0]["system"][0]["cache_control"] == {"type": "ephemeral"}
        elif model == "gpt-4o":
            assert heads[0][0]["prompt_cache_key"].startswith("evalledger-")
        else:
            assert "prompt_cache_key" not in heads[0][0]  # Gemini's OpenAI-compatible API is not OpenAI


def test_a_failed_call_leaves_its_question_for_the_next_run(env, admin, harness, standin, monkeypatch):
    standin.install_env(monkeypatch)
    standin.script("claude-sonnet-4-6", steps.ok(), steps.server_error(503))
    args = live_args(harness, "--questions", "EVAL-Q01,EVAL-Q02", "--concurrency", "1", "--retries", "0", "--deadline", "0")
    failed = run_cli(*args, env=env)
    assert failed.code == 3
    assert "  EVAL-Q02: no answer: provider_error" in failed.out
    assert failed.err == ("evalledger: error: 1 questions have no answer: run the same command again to ask "
                          "only those\n")
    standin.reset()
    standin.install_env(monkeypatch)
    resumed = run_cli(*args, env=env)
    assert resumed.code == 0, resumed.err
    assert "answers: 2 of 2 stored (1 before this resumption); 1 asked now" in resumed.out
    assert len(standin.requests_for("claude-sonnet-4-6")) == 1
    assert "EVAL-Q02" in standin.requests_for("claude-sonnet-4-6")[0].user or \
        DEMO["questions"][1]["text"] in standin.requests_for("claude-sonnet-4-6")[0].user


def test_the_budget_cap_makes_no_call(env, admin, harness, standin, monkeypatch):
    standin.install_env(monkeypatch)
    capped = run_cli(*live_args(harness, "--questions", "EVAL-Q01", "--budget-usd", "0"), env=env)
    assert capped.code == 3
    assert "  EVAL-Q01: no answer: budget_exhausted" in capped.out
    assert standin.requests_for("claude-sonnet-4-6") == []
    assert admin.execute("SELECT count(*) FROM brain_analysis_log").fetchone()[0] == 0


def test_a_draft_the_budget_holds_back_is_not_stored_and_the_same_command_asks_it(env, admin, harness, standin,
                                                                                  monkeypatch):
    """The brain's answer fits the cap and costs nearly all of it; the judges' drafts then do not fit.
    A draft never sent says nothing of its judge: it is not stored (a stored draft, a failure too,
    is final), the command says how many were held back, and the same command with room in its
    budget asks exactly those."""
    judges = {"anthropic:claude-opus-4-7", "google:gemini-1.5-pro", "openai:gpt-4o"}
    standin.install_env(monkeypatch)
    standin.script("claude-sonnet-4-6", steps.ok(usage=(1000, 2040)))  # $0.0336 of the $0.036
    capped = run_cli(*live_args(harness, "--questions", "EVAL-Q01", "--budget-usd", "0.036"), env=env)
    assert capped.code == 0, capped.err
    assert "answers: 1 of 1 stored" in capped.out
    drafted = {m for (m,) in admin.execute("SELECT model FROM brain_eval_judge_suggestion")}
    unsent = judges - drafted
    assert unsent, capped.out
    assert admin.execute("SELECT count(*) FROM brain_eval_judge_suggestion WHERE error_kind IS NOT NULL").fetchone() \
        == (0,)
    assert f"{len(unsent)} drafts not sent: the budget cap would have been passed; run the same command again " \
           "with room in --budget-usd to ask only those" in capped.err
    assert all(standin.requests_for(model.split(":")[1]) == [] for model in unsent)
    asked_before = {model: len(standin.requests_for(model.split(":")[1])) for model in judges}

    again = run_cli(*live_args(harness, "--questions", "EVAL-Q01", "--budget-usd", "5"), env=env)
    assert again.code == 0, again.err
    assert f"{len(unsent)} asked now" in again.out.split("suggestions: ")[1]
    assert "drafts not sent" not in again.err
    assert {model: len(standin.requests_for(model.split(":")[1])) - asked_before[model] for model in judges} == \
        {model: int(model in unsent) for model in judges}
    assert admin.execute("SELECT model, error_kind FROM brain_eval_judge_suggestion ORDER BY model").fetchall() == \
        [(model, None) for model in sorted(judges)]
    assert len(standin.requests_for("claude-sonnet-4-6")) == 1  # the stored answer is not asked again


@pytest.mark.parametrize("extra, message", [
    (("--answers", "auto", "--judges", "recorded"),
     "no API key for anthropic:claude-sonnet-4-6: set ANTHROPIC_API_KEY for live answers, or pass --answers recorded"),
    (("--answers", "recorded", "--judges", "auto"), "no API key for openai:gpt-4o (set OPENAI_API_KEY)"),
    (("--answers", "recorded", "--judges", "recorded", "--catalog", "v29-2026Q3"),
     "--answers recorded: the recorded answers are to catalog v28-2026Q2, not v29-2026Q3"),
])
def test_no_key_is_an_error_before_anything_is_written(env, admin, harness, tmp_path, extra, message):
    other = json.loads(DEMO_TEXT)
    other["version"] = "v29-2026Q3"
    (tmp_path / "q3.json").write_text(json.dumps(other))
    run_cli("catalog", "load", str(tmp_path / "q3.json"), env=env)
    refused = run_cli("run", "brain-eval", "--brain", "AGT-902", "--catalog", "v28-2026Q2", "--trigger", "on_demand",
                      "--reviewer", REVIEWER_ROLE, "--views-dir", str(harness), *extra, env=env)
    assert refused.code == 3 and refused.err.startswith("evalledger: error: ") and message in refused.err, refused.err
    assert admin.execute("SELECT count(*) FROM brain_eval_log").fetchone()[0] == 0


def killed_once_committed(args, env, admin, table: str, rows: int) -> None:
    """Run the command in a process of its own and SIGKILL it once `rows` rows of `table` are
    committed (as another session sees them); fails if it ends first."""
    from tests.cli import SCRIPT, _environment
    from tests.outages import killed_when

    killed = killed_when([str(SCRIPT), *args], _environment(env),
                         lambda: admin.execute(f"SELECT count(*) FROM {table}").fetchone()[0] >= rows)
    assert killed, f"the run ended before {rows} {table} rows"


@pytest.mark.processes
def test_a_run_killed_halfway_resumes_asking_only_the_rest(env, admin, harness, standin, monkeypatch):
    """The process itself is the point: SIGKILL leaves stored answers stored and the run open."""
    standin.install_env(monkeypatch)
    standin.set_default("claude-sonnet-4-6", steps.ok(latency_s=0.3))
    questions = ",".join(f"EVAL-Q{n:02d}" for n in range(1, 9))
    args = live_args(harness, "--questions", questions, "--concurrency", "1")
    killed_once_committed(args, env, admin, "brain_eval_harness_answer", 3)
    stored_before = admin.execute("SELECT count(*) FROM brain_eval_harness_answer").fetchone()[0]
    assert 3 <= stored_before < 8
    assert admin.execute("SELECT completed_at FROM brain_eval_log").fetchall() == [(None,)]
    asked_before = len(standin.requests_for("claude-sonnet-4-6"))

    resumed = run_cli(*args, env=env)
    assert resumed.code == 0, resumed.err
    assert "(resumed)" in resumed.out
    assert f"answers: 8 of 8 stored ({stored_before} before this resumption); {8 - stored_before} asked now" in resumed.out
    assert len(standin.requests_for("claude-sonnet-4-6")) - asked_before == 8 - stored_before
    assert admin.execute("SELECT count(*), count(DISTINCT question_id) FROM brain_eval_harness_answer").fetchone() == (8, 8)
    assert admin.execute("SELECT count(*) FROM brain_eval_log").fetchone()[0] == 1


@pytest.mark.processes
def test_a_run_killed_while_its_judges_draft_keeps_the_drafts_stored(env, admin, harness, standin, monkeypatch):
    """Each draft commits as it arrives, in the judges' phase too (recorded answers, live judges):
    SIGKILL leaves them stored, and the same command asks only the judges without a draft."""
    standin.install_env(monkeypatch)
    for model in ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro"):
        standin.set_default(model, steps.ok(latency_s=0.3))
    questions = ",".join(f"EVAL-Q{n:02d}" for n in range(1, 5))
    args = run_args(harness, "--questions", questions, "--concurrency", "1", judges="auto")
    killed_once_committed(args, env, admin, "brain_eval_judge_suggestion", 3)
    drafted = admin.execute("SELECT count(*) FROM brain_eval_judge_suggestion").fetchone()[0]
    assert 3 <= drafted < 12
    asked = sum(len(standin.requests_for(m)) for m in ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro"))
    resumed = run_cli(*args, env=env)
    assert resumed.code == 0, resumed.err
    assert sum(len(standin.requests_for(m)) for m in ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro")) - asked == 12 - drafted
    assert admin.execute("SELECT count(*), count(DISTINCT (question_id, model)) FROM brain_eval_judge_suggestion"
                         ).fetchone() == (12, 12)


@pytest.mark.server_timeouts
@pytest.mark.processes
def test_two_runs_of_one_harness_run_at_once_start_one_run_and_ask_each_question_once(env, admin, harness, standin,
                                                                                    monkeypatch):
    """Issue 39, item 2: two `run brain-eval` of the same run, started together on a ledger with no
    open run: they start one run between them, one process runs it, and the other stops at once
    (exit 3, one line) having asked the brain nothing. The brain's answers wait at the stand-in's
    gate until the second has stopped, so the first holds the run all along."""
    import os
    import subprocess
    import threading
    import time

    from tests.cli import SCRIPT, _environment

    standin.install_env(monkeypatch)
    for model in ("claude-sonnet-4-6", "gpt-4o", "claude-opus-4-7", "gemini-1.5-pro"):
        standin.set_default(model, steps.ok())
    asked = [f"EVAL-Q{n:02d}" for n in range(1, 5)]
    argv = [str(SCRIPT), *live_args(harness, "--questions", ",".join(asked))]
    full = {**os.environ, **_environment(env)}
    standin.gate = threading.Event()
    both = [subprocess.Popen(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    try:
        deadline = time.monotonic() + 90
        while all(p.poll() is None for p in both):
            assert time.monotonic() < deadline, "neither process stopped while the brain's answers were held"
            time.sleep(0.05)
        [loser] = [p for p in both if p.poll() is not None]
        [winner] = [p for p in both if p is not loser]
        lost_out, lost_err = loser.communicate(timeout=30)
        standin.gate.set()
        won_out, won_err = winner.communicate(timeout=120)
    finally:
        standin.gate.set()
        for p in both:
            if p.poll() is None:
                p.kill()
    assert winner.returncode == 0, won_err
    [(run_id, started_at)] = admin.execute("SELECT eval_run_id, now() FROM brain_eval_log").fetchall()
    assert loser.returncode == 3 and lost_out == "", lost_out
    said = re.fullmatch(rf"evalledger: error: run {run_id} is being run by another process since "
                        r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC; run the same command again when it ends\n", lost_err)
    assert said, lost_err
    from datetime import datetime, timezone
    since = datetime.strptime(said.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
    assert abs((started_at - since).total_seconds()) < 300
    # Each question asked of the brain once, each judge once per answer; one answer each.
    texts = {q["text"]: q["id"] for q in DEMO["questions"]}
    brain = sorted(texts[t] for r in standin.requests_for("claude-sonnet-4-6") for t in texts if t in r.user)
    assert brain == asked
    for judge in ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro"):
        assert len(standin.requests_for(judge)) == len(asked), judge
    assert admin.execute("SELECT count(*), count(DISTINCT question_id) FROM brain_eval_harness_answer").fetchone() == (4, 4)
    assert admin.execute("SELECT count(*) FROM brain_eval_judge_suggestion").fetchone()[0] == 12
    # The run is the winner's; the same command again, once it ended, finds nothing left to ask.
    again = run_cli(*live_args(harness, "--questions", ",".join(asked)), env=env)
    assert again.code == 0 and "0 asked now" in again.out, again.out + again.err


@pytest.mark.processes
def test_a_run_whose_connection_is_lost_says_the_same_command_resumes_it(env, admin, harness, standin, monkeypatch):
    """Issue 39 (what failed, 5): the lost connection's line says what docs/runs.md promises, and
    the same command does resume the run. The server ends every session of the ledger while the
    brain's answers are held at the stand-in's gate."""
    import threading

    from tests.cli import start_script, wait_until

    standin.install_env(monkeypatch)
    standin.set_default("claude-sonnet-4-6", steps.ok())
    args = live_args(harness, "--questions", "EVAL-Q01,EVAL-Q02", "--judges", "recorded")
    standin.gate = threading.Event()
    process = start_script(*args, env=env, text=True)
    try:
        wait_until(process, lambda: standin.requests_for("claude-sonnet-4-6"), "asked the brain")
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        standin.gate.set()
        _, err = process.communicate(timeout=60)
    finally:
        standin.gate.set()
        if process.poll() is None:
            process.kill()
    assert process.returncode == 3
    [line] = err.splitlines()
    assert line.startswith("evalledger: error: the database connection was lost (")
    assert line.endswith("once it is back (`evalledger doctor` checks), run the same command again: it resumes the run")
    [(run_id,)] = admin.execute("SELECT eval_run_id FROM brain_eval_log").fetchall()
    resumed = run_cli(*args, env=env)
    assert resumed.code == 0, resumed.err
    assert resumed.out.startswith(f"run {run_id} (resumed)")
    assert admin.execute("SELECT count(*) FROM brain_eval_harness_answer").fetchone() == (2,)


def test_a_judge_that_errors_keeps_its_failure_and_the_others_their_drafts(env, admin, harness, standin, monkeypatch):
    standin.install_env(monkeypatch)
    standin.script("claude-opus-4-7", steps.server_error(503))
    done = run_cli(*live_args(harness, "--questions", "EVAL-Q01", "--retries", "0", "--deadline", "0"), env=env)
    assert done.code == 0, done.err
    assert "  EVAL-Q01 anthropic:claude-opus-4-7: provider_error" in done.out
    rows = admin.execute("SELECT model, contributes, error_kind FROM brain_eval_judge_suggestion ORDER BY model").fetchall()
    assert rows == [("anthropic:claude-opus-4-7", False, "provider_error"), ("google:gemini-1.5-pro", True, None),
                    ("openai:gpt-4o", True, None)]
    again = run_cli(*live_args(harness, "--questions", "EVAL-Q01", "--retries", "0", "--deadline", "0"), env=env)
    assert "0 asked now" in again.out.split("suggestions: ")[1]  # a stored failure is not asked again


def test_the_reviewer_reads_answers_scores_and_every_judges_suggestion(env, harness):
    from tests.conftest import OTHER_REVIEWER_ROLE

    done = run_cli(*run_args(harness, "--questions", "EVAL-Q03,EVAL-Q07,EVAL-Q24"), env=env)
    run_id = done.out.split()[1]
    blind = run_cli("review", "show", run_id, "EVAL-Q07", "--as", REVIEWER_ROLE, env=env)
    assert blind.code == 0, blind.err
    assert ("  judges: suggestions hidden until you save your numbers for this question "
            "(or --show-suggestions, which is recorded)") in blind.out.splitlines()
    assert "  judge " not in blind.out
    assert "  your numbers: none saved yet" in blind.out.splitlines()
    shown = run_cli("review", "show", run_id, "EVAL-Q07", "--as", REVIEWER_ROLE, "--show-suggestions", env=env)
    assert shown.code == 0, shown.err
    lines = shown.out.splitlines()
    assert lines[0] == "EVAL-Q07  coverage_gap"
    assert lines[1] == f"  question: {DEMO['questions'][6]['text']}"
    assert "  claims: 3 (2 numerical)" in lines
    assert any(re.match(r"    \d+\. \[high\] ", l) and l.endswith("<- crm_export_2025") for l in lines)
    assert ("  automatic: citation rate 0.5, confidence high 33.33% / multi-source 33.33% / inference 33.33% / "
            "speculation 0%, lever violations 0") in lines
    judges = [l for l in lines if l.startswith("  judge ")]
    assert [l.split()[1] for l in judges] == ["anthropic:claude-opus-4-7", "google:gemini-1.5-pro", "openai:gpt-4o"]
    assert judges[0].startswith("  judge anthropic:claude-opus-4-7 (the brain’s family) (recorded): 3 claims; 1 unsupported")
    assert shown.out.count("      “") == 3  # each judge quotes the unsupported claim

    stale = run_cli("review", "show", run_id, "EVAL-Q03", "--as", REVIEWER_ROLE, "--show-suggestions", env=env)
    assert stale.out.startswith("EVAL-Q03  plan_diagnosis  STALE FIXTURE\n")
    # The judges disagree on diagnosis accuracy: each keeps its own number.
    diagnoses = sorted(l.split("diagnosis ")[1].split(";")[0] for l in stale.out.splitlines() if l.startswith("  judge "))
    assert diagnoses == ["0.5", "1", "1"]
    assert stale.out.count("staleness recognised: yes") == 3

    broken = run_cli("review", "show", run_id, "EVAL-Q24", "--as", REVIEWER_ROLE, "--show-suggestions", env=env)
    assert "  answer breaks the contract (not a JSON document): I could not find enough" in broken.out
    assert "judge " not in broken.out

    as_json = json.loads(run_cli("review", "show", run_id, "--as", REVIEWER_ROLE, "--json", env=env).out)
    assert [r["question_id"] for r in as_json] == ["EVAL-Q03", "EVAL-Q07", "EVAL-Q24"]
    assert [len(r["suggestions"]) for r in as_json] == [3, 3, 0]
    assert {r["entered"]["total_claims"] for r in as_json} == {None}

    # What the reviewer saved is what it checks before signing off (never the verdict: it may not read it).
    scored = run_cli("review", "score", run_id, "EVAL-Q07", "--claims", "3", "--hallucinations", "1",
                     "--coherence", "4", "--as", REVIEWER_ROLE, env=env)
    assert scored.code == 0, scored.err
    saved = run_cli("review", "show", run_id, "EVAL-Q07", "--as", REVIEWER_ROLE, env=env)
    entered = [l for l in saved.out.splitlines() if l.startswith("  your numbers: ")]
    assert entered == ["  your numbers: hallucinations detected 1, total claims 3, narrative coherence 4"], saved.out
    as_json = json.loads(run_cli("review", "show", run_id, "EVAL-Q07", "--as", REVIEWER_ROLE, "--json", env=env).out)
    assert as_json[0]["entered"] == {"hallucinations_detected": 1, "total_claims": 3,
                                     "staleness_correctly_recognized": None, "diagnosis_accuracy_score": None,
                                     "narrative_coherence_rating": 4, "reviewer_comments": None}

    stranger = run_cli("review", "show", run_id, "--as", OTHER_REVIEWER_ROLE, env=env)
    assert (stranger.code, stranger.err) == (3, f"evalledger: error: no answered run {run_id} that you review\n")


def test_a_harness_run_is_reviewed_then_completed_and_decided(env, admin, harness):
    from evalledger.suites.brain_eval.demo import review_path

    run_id = run_cli(*run_args(harness), env=env).out.split()[1]
    early = run_cli("brain-eval", "complete", run_id, env=env)
    assert early.code == 3 and f"run {run_id} is not complete: EVAL-Q01: hallucinations_detected" in early.err
    assert admin.execute("SELECT count(*), count(*) FILTER (WHERE question_passed IS NULL) "
                         "FROM brain_eval_question_score WHERE eval_run_id = %s", (run_id,)).fetchone() == (30, 30)

    scored = run_cli("review", "score", run_id, "--from", str(review_path()), "--as", REVIEWER_ROLE, env=env)
    assert scored.code == 0, scored.err
    assert "EVAL-Q24: complete" in scored.out.splitlines()  # the reviewer is told no verdict ...
    assert admin.execute("SELECT question_passed FROM brain_eval_question_score WHERE eval_run_id = %s AND "
                         "question_id = 'EVAL-Q24'", (run_id,)).fetchone()[0] is False  # ... the contract-breaking answer's
    assert run_cli("review", "finish", run_id, "--hours", "2.25", "--as", REVIEWER_ROLE, env=env).code == 0
    completed = run_cli("brain-eval", "complete", run_id, env=env)
    assert completed.code == 1, completed.err
    assert ("  rationale Fail: hard criteria missed: lever mapping 6.7pp below 100%; "
            "also confidence calibration 80pp below band.\n") in completed.out
    cost, hours, analyses = admin.execute(
        "SELECT l.token_cost_usd, l.reviewer_hours_spent, (SELECT sum(a.token_cost_usd) FROM brain_analysis_log a "
        "JOIN brain_eval_harness_answer h USING (analysis_id) WHERE h.eval_run_id = l.eval_run_id) "
        "FROM brain_eval_log l WHERE l.eval_run_id = %s", (run_id,)).fetchone()
    assert (cost, float(hours)) == (analyses, 2.25)
