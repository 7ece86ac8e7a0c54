"""The harness's ledger tables on a real PostgreSQL: question catalogs loaded whole and never
changed, brain versions numbered and hashed by the database, and who may read or write them."""

from __future__ import annotations

import copy
import hashlib
import json

import psycopg
import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from evalledger.suites.brain_eval import brains, catalog

DEMO = json.loads(catalog.demo_catalog_path().read_text("utf-8"))
HARNESS_TABLES = ("brain_eval_catalog", "brain_eval_catalog_question", "brain_version")
READERS = ("evalledger_runner", "evalledger_reviewer", "evalledger_revops", "evalledger_auditor")


@pytest.fixture
def owner(connect_as):
    return connect_as("evalledger_owner")


@pytest.fixture
def loaded(owner):
    """The demo catalog, loaded as the owner."""
    return catalog.load(owner, DEMO, "catalog_v28-2026Q2.json")


def insert_document(conn, document, **extra):
    columns = ["document", *extra]
    values = [Jsonb(document), *extra.values()]
    conn.execute(f"INSERT INTO evalledger.brain_eval_catalog ({', '.join(columns)}) "
                 f"VALUES ({', '.join(['%s'] * len(values))})", values)


# -- catalogs ---------------------------------------------------------------------------------------

def test_loading_reads_every_question_row_from_the_document(owner, loaded):
    assert (loaded.catalog_version, loaded.question_count, loaded.added) == ("v28-2026Q2", 30, True)
    rows = owner.execute(
        "SELECT position, question_id, question_type, question_text, sources, uses_stale_fixture, pass_criteria "
        "FROM brain_eval_catalog_question WHERE catalog_version = 'v28-2026Q2' ORDER BY position").fetchall()
    assert rows == [(n, q["id"], q["type"], q["text"], q["sources"], q["uses_stale_fixture"], q["pass_criteria"])
                    for n, q in enumerate(DEMO["questions"], start=1)]
    assert [q["question_id"] for q in catalog.questions(owner, "v28-2026Q2")] == [q["id"] for q in DEMO["questions"]]
    assert catalog.document(owner, "v28-2026Q2") == DEMO


def test_fingerprint_is_the_content_not_the_spelling(owner, loaded):
    reordered = {k: DEMO[k] for k in reversed(list(DEMO))}
    assert catalog.load(owner, reordered, None) == catalog.Loaded("v28-2026Q2", 30, loaded.document_sha256, False)
    changed = copy.deepcopy(DEMO)
    changed["version"] = "v29-2026Q3"
    changed["questions"][0]["text"] += "?"
    other = catalog.load(owner, changed, None)
    assert other.added and other.document_sha256 != loaded.document_sha256
    assert len(loaded.document_sha256) == 64 and int(loaded.document_sha256, 16) >= 0


def test_a_loaded_version_never_changes(owner, loaded):
    changed = copy.deepcopy(DEMO)
    changed["questions"][3]["pass_criteria"]["min_citation_rate"] = 0.5
    with pytest.raises(Exception, match=r"catalog v28-2026Q2 is already loaded with other content"):
        catalog.load(owner, changed, None)
    assert catalog.document(owner, "v28-2026Q2") == DEMO


@pytest.mark.parametrize("column, value", [("document_sha256", "a" * 64), ("question_count", 30)])
def test_computed_catalog_columns_cannot_be_supplied(owner, column, value):
    with pytest.raises(errors.InsufficientPrivilege, match=rf"brain_eval_catalog.{column} computed by the database"):
        insert_document(owner, DEMO, **{column: value})


def test_catalog_version_must_be_the_documents(owner):
    with pytest.raises(errors.CheckViolation, match="catalog_version v27 is not the document's version v28-2026Q2"):
        insert_document(owner, DEMO, catalog_version="v27")


def test_no_question_joins_a_loaded_catalog(admin, owner, loaded):
    # The owner holds no INSERT on the catalog's questions (issue 17); the superuser meets the trigger.
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied for table brain_eval_catalog_question"):
        owner.execute("INSERT INTO brain_eval_catalog_question (catalog_version, position) VALUES ('v28-2026Q2', 31)")
    owner = admin
    with pytest.raises(errors.ForeignKeyViolation, match="catalog v28-2026Q2 has no question at position 31"):
        owner.execute("INSERT INTO brain_eval_catalog_question (catalog_version, position) VALUES ('v28-2026Q2', 31)")
    # A question given whole is still read from the document, so it is a duplicate of the one there.
    with pytest.raises(errors.UniqueViolation):
        owner.execute("INSERT INTO brain_eval_catalog_question (catalog_version, position, question_id, question_type, "
                      "question_text, sources, uses_stale_fixture, pass_criteria) VALUES ('v28-2026Q2', 1, 'EVAL-Q99', "
                      "'qbr_narrative', 'x', '[{\"id\": \"a\"}]', false, '{}')")
    assert owner.execute("SELECT count(*) FROM brain_eval_catalog_question").fetchone()[0] == 30


@pytest.mark.parametrize("table", ["brain_eval_catalog", "brain_eval_catalog_question"])
@pytest.mark.parametrize("role", ["evalledger_owner", None])
def test_catalog_rows_cannot_change(admin, connect_as, loaded, table, role):
    conn = connect_as(role) if role else admin
    # The owner role holds no UPDATE, DELETE or TRUNCATE (issue 17); the superuser meets the guard.
    says = f"permission denied for table {table}" if role else "append-only"
    for statement in (f"UPDATE evalledger.{table} SET loaded_at = now()" if table == "brain_eval_catalog"
                      else f"UPDATE evalledger.{table} SET question_text = 'edited'",
                      f"DELETE FROM evalledger.{table}", f"TRUNCATE evalledger.{table} CASCADE"):
        with pytest.raises(errors.InsufficientPrivilege, match=says):
            conn.execute(statement)
    assert admin.execute(f"SELECT count(*) FROM evalledger.{table}").fetchone()[0] == (
        1 if table == "brain_eval_catalog" else 30)


@pytest.mark.parametrize("bend, constraint", [
    (lambda d: d["questions"][6].update(type="unknown"), "brain_eval_catalog_question_type_known"),
    (lambda d: d["questions"][6].update(id="eval-q06"), "brain_eval_catalog_question_id_format"),
    (lambda d: d["questions"][6].update(uses_stale_fixture=True), "brain_eval_catalog_question_stale_iff_stale_source"),
    (lambda d: d["questions"][6]["sources"][0].pop("id"), "brain_eval_catalog_question_sources_shape"),
    (lambda d: d["questions"][6]["pass_criteria"].update(min_citation_rate=2), "brain_eval_catalog_question_pass_criteria_shape"),
    (lambda d: d["questions"][6]["pass_criteria"].update(min_diagnosis_accuracy=0.7), "brain_eval_catalog_question_pass_criteria_shape"),
    (lambda d: d["questions"][6]["pass_criteria"].update(min_narrative_coherence="4"), "brain_eval_catalog_question_pass_criteria_shape"),
    (lambda d: d["questions"][6]["pass_criteria"].pop("max_hallucinations"), "brain_eval_catalog_question_pass_criteria_shape"),
])
def test_database_refuses_a_bad_question_and_keeps_nothing(owner, bend, constraint):
    """The file check runs first, but the database holds the line too: nothing of the load remains."""
    bad = copy.deepcopy(DEMO)
    bend(bad)
    with pytest.raises(errors.CheckViolation) as caught:
        with owner.transaction():
            catalog.load(owner, bad, None)
    assert caught.value.diag.constraint_name == constraint
    assert owner.execute("SELECT count(*) FROM brain_eval_catalog").fetchone()[0] == 0
    assert owner.execute("SELECT count(*) FROM brain_eval_catalog_question").fetchone()[0] == 0


def test_database_refuses_a_source_id_twice_in_a_question(owner):
    bad = copy.deepcopy(DEMO)
    bad["questions"][2]["sources"][1]["id"] = bad["questions"][2]["sources"][0]["id"]
    with pytest.raises(errors.CheckViolation, match="question EVAL-Q03 of catalog v28-2026Q2 names a source id twice"):
        catalog.load(owner, bad, None)


@pytest.mark.parametrize("document", [[], {"version": "v1"}, {"version": 1, "questions": []}])
def test_database_refuses_what_is_not_a_catalog(owner, document):
    with pytest.raises(errors.CheckViolation):
        insert_document(owner, document)


# -- brain versions ---------------------------------------------------------------------------------

PROMPT = "You are the action brain. Cite every number — with its source id.\r\nNever guess.\n"


def test_versions_are_numbered_and_prompts_hashed_by_the_database(owner):
    first, added = brains.add(owner, "AGT-902", "anthropic:claude-sonnet-4-6", PROMPT, "action_brain_v1",
                              ["reprice", "add_headcount", "reprice"])
    assert added and first.version == 1
    assert first.system_prompt_hash == hashlib.sha256(PROMPT.encode("utf-8")).hexdigest()
    assert first.system_prompt == PROMPT
    assert (first.provider, first.model_id, first.levers) == ("anthropic", "claude-sonnet-4-6", ["add_headcount", "reprice"])
    second, added = brains.add(owner, "AGT-902", "anthropic:claude-sonnet-4-6", PROMPT + "Be brief.\n")
    assert added and second.version == 2 and second.system_prompt_hash != first.system_prompt_hash
    other_brain, _ = brains.add(owner, "AGT-901", "openai:gpt-5", PROMPT)
    assert other_brain.version == 1 and other_brain.system_prompt_hash == first.system_prompt_hash
    assert [(v.target_id, v.version) for v in brains.versions(owner)] == [("AGT-901", 1), ("AGT-902", 1), ("AGT-902", 2)]
    assert brains.resolve(owner, "AGT-902").version == 2
    assert brains.resolve(owner, "AGT-902", "action_brain_v1").version == 1


def test_the_same_configuration_is_the_same_version(owner):
    first, _ = brains.add(owner, "AGT-902", "anthropic:claude-sonnet-4-6", PROMPT, None, ["reprice", "add_headcount"])
    again, added = brains.add(owner, "AGT-902", "anthropic/claude-sonnet-4-6", PROMPT, None, ["add_headcount", "reprice"])
    assert not added and again == first
    new_levers, added = brains.add(owner, "AGT-902", "anthropic:claude-sonnet-4-6", PROMPT, None, ["reprice"])
    assert added and new_levers.version == 2


def test_a_label_names_one_version(owner):
    brains.add(owner, "AGT-902", "anthropic:claude-sonnet-4-6", PROMPT, "v3")
    with pytest.raises(errors.UniqueViolation) as caught:
        brains.add(owner, "AGT-902", "anthropic:claude-sonnet-4-6", PROMPT + "x", "v3")
    assert caught.value.diag.constraint_name == "brain_version_label_key"


@pytest.mark.parametrize("column, value", [("system_prompt_hash", "a" * 64), ("version", 7)])
def test_computed_brain_columns_cannot_be_supplied(owner, column, value):
    with pytest.raises(errors.InsufficientPrivilege, match=rf"brain_version.{column} computed by the database"):
        owner.execute(f"INSERT INTO brain_version (target_id, provider, model_id, system_prompt, {column}) "
                      "VALUES ('AGT-902', 'anthropic', 'm', 'p', %s)", (value,))


def test_only_brains_have_versions(owner, admin):
    admin.execute("INSERT INTO target (target_id, kind, display_name) VALUES ('BOT-1', 'bot', 'A bot')")
    for target in ("BOT-1", "AGT-999"):
        with pytest.raises(errors.ForeignKeyViolation, match=f"{target} is not a registered brain"):
            brains.add(owner, target, "openai:gpt-5", PROMPT)


@pytest.mark.parametrize("levers", [["Reprice"], ["re price"], [""]])
def test_levers_are_action_type_names(owner, levers):
    with pytest.raises(psycopg.Error) as caught:
        owner.execute("INSERT INTO brain_version (target_id, provider, model_id, system_prompt, levers) "
                      "VALUES ('AGT-902', 'anthropic', 'm', 'p', %s)", (levers,))
    assert caught.value.diag.constraint_name == "brain_version_levers_format"


@pytest.mark.parametrize("role", ["evalledger_owner", None])
def test_a_prompt_is_never_edited(admin, connect_as, role):
    conn = connect_as(role) if role else admin
    brains.add(connect_as("evalledger_owner"), "AGT-902", "anthropic:claude-sonnet-4-6", PROMPT)
    says = "permission denied for table brain_version" if role else "append-only"  # the owner: no such privilege
    for statement in ("UPDATE evalledger.brain_version SET system_prompt = 'edited'",
                      "DELETE FROM evalledger.brain_version", "TRUNCATE evalledger.brain_version CASCADE"):
        with pytest.raises(errors.InsufficientPrivilege, match=says):
            conn.execute(statement)
    assert admin.execute("SELECT system_prompt FROM evalledger.brain_version").fetchall() == [(PROMPT,)]


# -- who may do what --------------------------------------------------------------------------------

@pytest.mark.parametrize("table", HARNESS_TABLES)
def test_readers_read_and_nobody_else_writes(admin, reviewers, table):
    relation = f"evalledger.{table}"
    # A reviewer reads a catalog's questions but not their pass criteria nor the document holding
    # them (migration 0009: the reference answer shows only after the reviewer's numbers).
    hidden = {"brain_eval_catalog": "document", "brain_eval_catalog_question": "pass_criteria"}
    for role in (*READERS, "evalledger_test_reviewer_a"):
        granted = admin.execute(
            "SELECT has_table_privilege(%(r)s, %(t)s, 'SELECT'), has_table_privilege(%(r)s, %(t)s, 'INSERT'), "
            "has_table_privilege(%(r)s, %(t)s, 'UPDATE'), has_table_privilege(%(r)s, %(t)s, 'DELETE'), "
            "has_table_privilege(%(r)s, %(t)s, 'TRUNCATE')", {"r": role, "t": relation}).fetchone()
        reviewing = role in ("evalledger_reviewer", "evalledger_test_reviewer_a") and table in hidden
        assert granted == (not reviewing, False, False, False, False), (role, table)
        if reviewing:
            assert admin.execute("SELECT has_any_column_privilege(%s, %s, 'SELECT'), has_column_privilege(%s, %s, %s, "
                                 "'SELECT')", (role, relation, role, relation, hidden[table])).fetchone() == (True, False)
        assert admin.execute("SELECT has_any_column_privilege(%s, %s, 'INSERT, UPDATE')", (role, relation)).fetchone()[0] is False
    assert admin.execute("SELECT has_any_column_privilege('evalledger_agent', %s, 'SELECT, INSERT, UPDATE')",
                         (relation,)).fetchone()[0] is False


def test_every_reader_sees_every_row_and_the_agent_none(connect_as, loaded, owner):
    brains.add(owner, "AGT-902", "anthropic:claude-sonnet-4-6", PROMPT)
    for role in READERS:
        conn = connect_as(role)
        assert conn.execute("SELECT count(*) FROM evalledger.brain_eval_catalog_question").fetchone()[0] == 30, role
        assert conn.execute("SELECT count(*) FROM evalledger.brain_version").fetchone()[0] == 1, role
    agent = connect_as("evalledger_agent")
    with pytest.raises(errors.InsufficientPrivilege):
        agent.execute("SELECT 1 FROM evalledger.brain_version")


def test_runner_loads_no_catalog_and_registers_no_brain(connect_as):
    runner = connect_as("evalledger_runner")
    with pytest.raises(errors.InsufficientPrivilege):
        catalog.load(runner, DEMO, None)
    with pytest.raises(errors.InsufficientPrivilege):
        brains.add(runner, "AGT-902", "anthropic:claude-sonnet-4-6", PROMPT)


def test_harness_functions_are_no_ones_to_call(admin):
    callable_by = admin.execute(
        "SELECT p.proname, r.rolname FROM pg_proc p CROSS JOIN pg_roles r "
        "WHERE p.pronamespace = 'evalledger'::regnamespace AND p.proname IN ('brain_eval_catalog_admit_v1', "
        "'brain_eval_catalog_expand_v1', 'brain_eval_catalog_question_admit_v1', 'brain_version_admit_v2') "
        "AND r.rolname IN ('evalledger_runner', 'evalledger_reviewer', 'evalledger_revops', 'evalledger_auditor', "
        "'evalledger_agent') AND has_function_privilege(r.oid, p.oid, 'EXECUTE')").fetchall()
    assert callable_by == []


# -- the view-contracts hash against the real database ------------------------------------------------

from evalledger.suites.brain_eval import contracts  # noqa: E402

CONTRACT_SCHEMA = "brain_views"
# The brain's warehouse: two tables and the brain-ready views over them, created as written here.
WAREHOUSE = """
CREATE SCHEMA brain_views;
CREATE TABLE brain_views.accounts (account_id int PRIMARY KEY, name text, region text, arr numeric, status text,
                                   closed_on date);
CREATE TABLE brain_views.opportunities (opp_id int PRIMARY KEY, account_id int, stage text, amount numeric,
                                        created_at timestamptz);
CREATE VIEW brain_views.v_active_accounts AS
    SELECT account_id, name, arr FROM brain_views.accounts WHERE status = 'active' AND arr > 1000;
CREATE VIEW brain_views.v_pipeline AS
    SELECT a.region, o.stage, sum(o.amount) AS amount, count(*) AS n
      FROM brain_views.opportunities o JOIN brain_views.accounts a ON a.account_id = o.account_id
     WHERE o.stage IN ('commit', 'best_case') AND o.created_at >= now() - interval '90 days'
     GROUP BY a.region, o.stage;
CREATE VIEW brain_views.v_churn AS
    SELECT account_id, CASE WHEN closed_on IS NULL THEN 'open' ELSE 'closed' END AS state,
           coalesce(arr, 0) * 1.1 AS arr_next, closed_on BETWEEN '2026-01-01' AND '2026-03-31' AS q1
      FROM brain_views.accounts WHERE region <> 'APAC' OR (arr >= 10 AND arr < 20);
CREATE VIEW brain_views.v_region_totals AS
    WITH r AS (SELECT region, sum(arr) AS total FROM brain_views.accounts GROUP BY region)
    SELECT region, total FROM r WHERE total > 0 ORDER BY total DESC LIMIT 5;
"""
# The same contract as files a person wrote: other whitespace, comments, keyword case,
# parentheses and qualifiers, and the casts PostgreSQL prints for numbers and dates.
FILES = {
    "accounts.sql": """-- Active accounts the brain may cite.
create view brain_views.V_ACTIVE_ACCOUNTS as
select ACCOUNT_ID, Name, arr
  from accounts /* the CRM mirror */
 where (status = 'active') and (arr > 1000::numeric);

CREATE VIEW v_churn AS SELECT accounts.account_id,
  CASE WHEN (accounts.closed_on IS NULL) THEN 'open'::text ELSE 'closed'::text END AS state,
  (COALESCE(accounts.arr, 0::numeric) * 1.1) AS arr_next,
  ((accounts.closed_on >= '2026-01-01'::date) AND (accounts.closed_on <= '2026-03-31'::date)) AS q1
FROM brain_views.accounts
WHERE ((accounts.region <> 'APAC') OR ((accounts.arr >= 10::numeric) AND (accounts.arr < 20::numeric)));
""",
    "pipeline.sql": """CREATE VIEW v_pipeline AS
SELECT a.region, o.stage, SUM(o.amount) AS amount, COUNT(*) AS n
FROM opportunities o INNER JOIN accounts a ON (a.account_id = o.account_id)
WHERE o.stage = ANY (ARRAY['commit'::text, 'best_case'::text])
  AND o.created_at >= (now() - '90 days'::interval)
GROUP BY a.region, o.stage
""",
    "totals.sql": """CREATE VIEW v_region_totals AS
WITH r AS (SELECT region, sum(arr) AS total FROM accounts GROUP BY region)
SELECT r.region, r.total FROM r WHERE (r.total > 0::numeric) ORDER BY r.total DESC LIMIT 5;
""",
}


@pytest.fixture
def warehouse(admin):
    admin.execute(WAREHOUSE)
    return admin


@pytest.fixture
def folder(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def live(conn) -> contracts.Contracts:
    return contracts.from_database(conn, CONTRACT_SCHEMA, "the test database")


def test_live_views_and_files_hash_the_same(warehouse, folder):
    from_db, from_files = live(warehouse), contracts.from_folder(folder, CONTRACT_SCHEMA)
    assert sorted(v.name for v in from_db.views) == ["v_active_accounts", "v_churn", "v_pipeline", "v_region_totals"]
    assert {v.name: v.canonical for v in from_db.views} == {v.name: v.canonical for v in from_files.views}
    assert from_db.sha256 == from_files.sha256
    assert from_db.source == "database the test database schema brain_views"


def test_files_dumped_from_the_live_views_hash_the_same(warehouse, tmp_path):
    written = contracts.dump(warehouse, CONTRACT_SCHEMA, "the test database", tmp_path / "dumped")
    assert sorted(p.name for p in written) == ["v_active_accounts.sql", "v_churn.sql", "v_pipeline.sql",
                                                "v_region_totals.sql"]
    assert contracts.from_folder(tmp_path / "dumped", CONTRACT_SCHEMA).sha256 == live(warehouse).sha256


def test_a_view_redefined_in_other_words_keeps_the_hash(warehouse):
    before = live(warehouse).sha256
    warehouse.execute("CREATE OR REPLACE VIEW brain_views.v_active_accounts AS SELECT a.account_id, a.name, a.arr "
                      "FROM brain_views.accounts AS a WHERE ((a.arr > 1000) AND a.status = 'active'::text)")
    assert live(warehouse).sha256 != before  # the conditions' order is part of the definition
    warehouse.execute("create or replace view brain_views.v_active_accounts as select ACCOUNTS.account_id, name, "
                      "accounts.arr -- same\n from brain_views.accounts where ((status = 'active'::text) and "
                      "(arr > (1000)))")
    assert live(warehouse).sha256 == before


@pytest.mark.parametrize("change", [
    "CREATE OR REPLACE VIEW brain_views.v_active_accounts AS SELECT account_id, name, arr FROM brain_views.accounts "
    "WHERE status = 'active' AND arr > 1001",
    "CREATE OR REPLACE VIEW brain_views.v_active_accounts AS SELECT account_id, name, arr FROM brain_views.accounts "
    "WHERE status = 'active' OR arr > 1000",
    "CREATE OR REPLACE VIEW brain_views.v_pipeline AS SELECT a.region, o.stage, sum(o.amount) AS amount, count(*) AS n "
    "FROM brain_views.opportunities o LEFT JOIN brain_views.accounts a ON a.account_id = o.account_id "
    "WHERE o.stage IN ('commit', 'best_case') AND o.created_at >= now() - interval '90 days' GROUP BY a.region, o.stage",
    "CREATE OR REPLACE VIEW brain_views.v_churn AS SELECT account_id, CASE WHEN closed_on IS NULL THEN 'open' "
    "ELSE 'closed' END AS state, coalesce(arr, 0) * 1.2 AS arr_next, closed_on BETWEEN '2026-01-01' AND '2026-03-31' "
    "AS q1 FROM brain_views.accounts WHERE region <> 'APAC' OR (arr >= 10 AND arr < 20)",
    "CREATE OR REPLACE VIEW brain_views.v_churn AS SELECT account_id, CASE WHEN closed_on IS NULL THEN 'open' "
    "ELSE 'closed' END AS state, coalesce(arr, 0) * 1.1 AS arr_next, closed_on BETWEEN '2026-01-01' AND '2026-03-31' "
    "AS q1 FROM brain_views.accounts WHERE (region <> 'APAC' OR arr >= 10) AND arr < 20",
    "CREATE VIEW brain_views.v_extra AS SELECT 1 AS one",
    "DROP VIEW brain_views.v_region_totals",
])
def test_any_change_of_meaning_changes_the_hash(warehouse, folder, change):
    before = live(warehouse).sha256
    warehouse.execute(change)
    assert live(warehouse).sha256 != before
    assert contracts.from_folder(folder, CONTRACT_SCHEMA).sha256 == before


def test_a_schema_without_views_is_an_error(admin):
    with pytest.raises(Exception, match="no views in schema nowhere at the test database"):
        contracts.from_database(admin, "nowhere", "the test database")


# -- harness runs: the answers and the scores the database computes from them ---------------------------

from evalledger.suites.brain_eval import store  # noqa: E402

LEVERS = ["rep_coaching", "save_play"]
CONTRACTS = {"brain_view_contracts_hash": "c" * 64, "canonical_form": "canon-v1", "source": "folder x",
             "views": [{"name": "v", "sha256": "d" * 64}]}


@pytest.fixture
def harness_run(owner, loaded, reviewer_id, connect_as):
    """Open harness runs of AGT-902 (levers apply) and AGT-901 (they do not) over EVAL-Q01..Q03, each
    of a prompt of its own (a prompt AGT-902 also registered would be lever-mapped under any label)."""
    runner = connect_as("evalledger_runner")
    made = {}
    for brain, levers in (("AGT-902", LEVERS), ("AGT-901", [])):
        version, _ = brains.add(owner, brain, "anthropic:claude-sonnet-4-6", PROMPT + f"You are {brain}.\n", None, levers)
        version_id = owner.execute("SELECT brain_version_id FROM brain_version WHERE target_id = %s", (brain,)).fetchone()[0]
        run_id = store.start_run(runner, run_trigger="on_demand", brain_under_test=brain, model_id=version.model_id,
                                 system_prompt_hash=version.system_prompt_hash, brain_view_contracts_hash="c" * 64,
                                 question_catalog_version="v28-2026Q2", question_count=3, reviewer_user_id=reviewer_id)
        runner.execute("INSERT INTO brain_eval_harness_run (eval_run_id, brain_version_id, catalog_version, "
                       "question_ids, contracts, answers) VALUES (%s, %s, 'v28-2026Q2', %s, %s, 'live')",
                       (run_id, version_id, ["EVAL-Q01", "EVAL-Q02", "EVAL-Q03"], Jsonb(CONTRACTS)))
        made[brain] = (run_id, version)
    return runner, made


def claim(numerical=True, sources=("quota_attainment_emea",), confidence="high"):
    return {"text": "x", "numerical": numerical, "source_ids": list(sources), "confidence": confidence}


def answer(harness_run, claims=(), actions=None, brain="AGT-902", question="EVAL-Q01", contract_error=None):
    runner, made = harness_run
    run_id, version = made[brain]
    analysis_id = store.record_analysis(
        runner, brain=brain, model_id=version.model_id, system_prompt_hash=version.system_prompt_hash,
        question_id=question, question="q", output="o", claims=list(claims), proposed_actions=actions,
        token_cost_usd=0)
    runner.execute("INSERT INTO brain_eval_harness_answer (eval_run_id, question_id, analysis_id, recorded, "
                   "contract_error) VALUES (%s, %s, %s, false, %s)", (run_id, question, analysis_id, contract_error))
    return runner.execute("SELECT citation_rate::float, confidence_distribution, lever_mapping_violations "
                          "FROM brain_eval_harness_answer WHERE analysis_id = %s", (analysis_id,)).fetchone()


def pct(high=0, multi=0, inference=0, speculation=0):
    return {"high_confidence_pct": high, "multi_source_pct": multi, "inference_pct": inference,
            "speculation_pct": speculation}


@pytest.mark.parametrize("claims, rate", [
    ([], 1.0),                                                                   # nothing numerical to cite
    ([claim(numerical=False, sources=())], 1.0),                                # only a non-numerical claim
    ([claim()], 1.0),
    ([claim(sources=())], 0.0),                                                 # no citation at all
    ([claim(sources=("nowhere",))], 0.0),                                       # a source not given
    ([claim(sources=("quota_attainment_emea", "nowhere"))], 0.0),               # one citation not given
    ([claim(sources=("quota_attainment_emea", "win_rate_emea"))], 1.0),         # all given
    ([claim(), claim(sources=()), claim(sources=()), claim(numerical=False, sources=())], 0.3333),
    ([claim(), claim(), claim(sources=("win_rate_emea",))], 1.0),
])
def test_citation_rate_at_its_boundaries(harness_run, claims, rate):
    assert answer(harness_run, claims)[0] == rate


@pytest.mark.parametrize("labels, expected", [
    ([], pct()),
    (["high"], pct(high=100)),
    (["high", "multi_source", "inference", "speculation"], pct(25, 25, 25, 25)),
    (["high", "high", "speculation"], pct(high=66.67, speculation=33.33)),
])
def test_confidence_distribution_at_its_boundaries(harness_run, labels, expected):
    assert answer(harness_run, [claim(confidence=label) for label in labels])[1] == expected


@pytest.mark.parametrize("bad, says", [
    (claim(confidence="unknown"), 'claims[1].confidence is "unknown", not one of high, multi_source, inference or speculation'),
    ({**claim(), "numerical": "yes"}, 'claims[1].numerical is "yes", not true or false'),
    ({**claim(), "source_ids": "quota_attainment_emea"},
     'claims[1].source_ids is "quota_attainment_emea", not a list of source ids (strings)'),
    ("a claim", 'claims[1] is "a claim", not an object')])
def test_an_answer_said_to_keep_the_contract_must_have_claims_the_database_can_score(harness_run, bad, says):
    """What the scores are computed from must be there: an answer the runner says kept the contract
    with a claim lacking a label, a numerical flag or its source list is refused (no score is guessed)."""
    runner, _ = harness_run
    before = runner.execute("SELECT count(*) FROM brain_eval_harness_answer").fetchone()[0]
    with pytest.raises(errors.CheckViolation) as caught:
        answer(harness_run, [claim(), bad])
    assert caught.value.diag.message_primary.endswith(f"cannot be scored: {says}")
    assert caught.value.diag.constraint_name == "brain_eval_harness_answer_answer_scorable"
    assert runner.execute("SELECT count(*) FROM brain_eval_harness_answer").fetchone()[0] == before


@pytest.mark.parametrize("actions, violations", [
    (None, 0), ([], 0),
    ([{"action_type": "rep_coaching", "description": ""}], 0),
    ([{"action_type": "rep_coaching", "description": ""}, {"action_type": "save_play", "description": ""}], 0),
    ([{"action_type": "Rep_Coaching", "description": ""}], 1),
    ([{"action_type": "discount", "description": ""}, {"action_type": "rep_coaching", "description": ""},
      {"description": "no type"}], 2),
])
def test_lever_mapping_violations_for_agt_902(harness_run, actions, violations):
    assert answer(harness_run, [], actions)[2] == violations


def test_lever_mapping_does_not_apply_to_agt_901(harness_run):
    assert answer(harness_run, [], [{"action_type": "discount", "description": ""}], brain="AGT-901")[2] is None


def test_a_contract_breaking_answer_scores_nothing(harness_run):
    assert answer(harness_run, [claim()], contract_error="not a JSON document") == (0.0, pct(), 1)
    assert answer(harness_run, [claim()], brain="AGT-901", contract_error="$.claims: bad") == (0.0, pct(), None)


@pytest.mark.parametrize("column, value", [("citation_rate", 1), ("lever_mapping_violations", 0),
                                           ("confidence_distribution", Jsonb({}))])
def test_automatic_scores_cannot_be_supplied(harness_run, column, value):
    runner, made = harness_run
    run_id, version = made["AGT-902"]
    analysis_id = store.record_analysis(runner, brain="AGT-902", model_id=version.model_id,
                                        system_prompt_hash=version.system_prompt_hash, question_id="EVAL-Q01",
                                        question="q", output="o", token_cost_usd=0)
    with pytest.raises(errors.InsufficientPrivilege):
        runner.execute(f"INSERT INTO brain_eval_harness_answer (eval_run_id, question_id, analysis_id, recorded, "
                       f"{column}) VALUES (%s, 'EVAL-Q01', %s, false, %s)", (run_id, analysis_id, value))


def test_an_answer_belongs_to_its_runs_question_and_brain(harness_run):
    with pytest.raises(errors.CheckViolation, match="question EVAL-Q04 is not one of run"):
        answer(harness_run, question="EVAL-Q04")
    runner, made = harness_run
    run_id, _ = made["AGT-902"]
    other = store.record_analysis(runner, brain="AGT-902", model_id="other-model", system_prompt_hash="a" * 64,
                                  question_id="EVAL-Q01", question="q", output="o", token_cost_usd=0)
    with pytest.raises(errors.CheckViolation, match="is not this run's brain answering EVAL-Q01"):
        runner.execute("INSERT INTO brain_eval_harness_answer (eval_run_id, question_id, analysis_id, recorded) "
                       "VALUES (%s, 'EVAL-Q01', %s, false)", (run_id, other))
    answer(harness_run)
    with pytest.raises(errors.UniqueViolation):
        answer(harness_run)


HARNESS_RECORD = ("INSERT INTO brain_eval_harness_run (eval_run_id, brain_version_id, catalog_version, question_ids, "
                  "contracts, answers) VALUES (%s, %s, 'v28-2026Q2', %s, %s, 'live')")


def agt_902_run(runner, owner, reviewer_id, prompt_hash: str, trigger: str, questions: int):
    """An open AGT-902 run with this prompt hash, and the brain_version_id of AGT-902's version 1."""
    run = store.start_run(runner, run_trigger=trigger, brain_under_test="AGT-902", model_id="claude-sonnet-4-6",
                          system_prompt_hash=prompt_hash, brain_view_contracts_hash="c" * 64,
                          question_catalog_version="v28-2026Q2", question_count=questions, reviewer_user_id=reviewer_id)
    return run, owner.execute("SELECT brain_version_id FROM brain_version "
                              "WHERE target_id = 'AGT-902' AND version = 1").fetchone()[0]


def test_a_harness_record_agrees_with_its_run(harness_run, owner, reviewer_id):
    runner, made = harness_run
    # A run of AGT-902's second version (another prompt) is not a run of its first.
    other, _ = brains.add(owner, "AGT-902", "anthropic:claude-sonnet-4-6", PROMPT + " Another version.")
    other_run, version_id = agt_902_run(runner, owner, reviewer_id, other.system_prompt_hash, "on_demand", 1)
    with pytest.raises(errors.CheckViolation, match="is not of AGT-902 version 1"):
        runner.execute(HARNESS_RECORD, (other_run, version_id, ["EVAL-Q01"], Jsonb(CONTRACTS)))


def test_a_harness_record_lists_each_question_once(harness_run, owner, reviewer_id):
    runner, made = harness_run
    first, version = made["AGT-902"]
    # One run of a version and catalog is open at a time (docs/guards.md, section 31).
    runner.execute("SELECT brain_eval_cancel_v1(%s, 'a second run of the same version follows')", (first,))
    run, version_id = agt_902_run(runner, owner, reviewer_id, version.system_prompt_hash, "pre_launch", 2)
    for twice in (["EVAL-Q01", "EVAL-Q01"], ["EVAL-Q01", None]):
        with pytest.raises(errors.CheckViolation, match="brain_eval_harness_run_questions_distinct"):
            runner.execute(HARNESS_RECORD, (run, version_id, twice, Jsonb(CONTRACTS)))
    runner.execute(HARNESS_RECORD, (run, version_id, ["EVAL-Q01", "EVAL-Q02"], Jsonb(CONTRACTS)))


@pytest.mark.parametrize("table", ["brain_eval_harness_run", "brain_eval_harness_answer"])
def test_harness_records_cannot_change(admin, harness_run, table):
    answer(harness_run)
    for statement in (f"UPDATE evalledger.{table} SET created_at = now()", f"DELETE FROM evalledger.{table}",
                      f"TRUNCATE evalledger.{table} CASCADE"):
        with pytest.raises(errors.InsufficientPrivilege, match="append-only"):
            admin.execute(statement)


STALE = [q["id"] for q in DEMO["questions"] if q["uses_stale_fixture"]]
CLEAN = {"hallucinations_detected": 0, "total_claims": 4, "narrative_coherence_rating": 4}


def whole_run(owner, runner, reviewer_id, questions=("EVAL-Q01", *STALE)):
    """An open AGT-901 harness run over questions (default: EVAL-Q01 and every stale-fixture question)."""
    from tests.builders import open_harness_run

    run_id, version = open_harness_run(owner, runner, reviewer_id, questions, "AGT-901", PROMPT)
    return run_id, {"AGT-901": (run_id, version)}


def clean_scores(questions, **overrides):
    """A clean review of each question: stale ones recognised, diagnosis types scored."""
    types = {q["id"]: q["type"] for q in DEMO["questions"]}
    diagnosis = {"plan_diagnosis", "coverage_gap", "play_retrospective", "forecast_bias", "churn_diagnosis"}
    return {q: {**CLEAN, **({"staleness_correctly_recognized": True} if q in STALE else {}),
                **({"diagnosis_accuracy_score": 1} if types[q] in diagnosis else {}), **overrides}
            for q in questions}


def test_no_answer_or_suggestion_joins_a_completed_run(harness_run, owner, reviewer_id):
    from tests.builders import review_run

    runner, _ = harness_run
    run_id, made = whole_run(owner, runner, reviewer_id)
    for question in ("EVAL-Q01", *STALE):
        answer((runner, made), [claim(sources=())], brain="AGT-901", question=question)
    # One claim per answer: a reviewer counts no more supported claims than the answer lists.
    review_run(runner, reviewer_id, run_id, clean_scores(("EVAL-Q01", *STALE), total_claims=1))
    store.complete_run(runner, run_id)
    harness_run = (runner, made)
    with pytest.raises(errors.InsufficientPrivilege, match=f"no open harness run {run_id} takes answers"):
        answer(harness_run, brain="AGT-901", question="EVAL-Q02")
    with pytest.raises(errors.InsufficientPrivilege, match=f"no open harness run {run_id} takes suggestions"):
        runner.execute("INSERT INTO brain_eval_judge_suggestion (eval_run_id, question_id, model, recorded, "
                       "response_json) VALUES (%s, 'EVAL-Q01', 'openai:gpt-4o', false, %s)", (run_id, Jsonb(GOOD_DRAFT)))
    assert runner.execute("SELECT count(*) FROM brain_eval_judge_suggestion WHERE eval_run_id = %s",
                          (run_id,)).fetchone()[0] == 0


# -- judge suggestions -----------------------------------------------------------------------------------

GOOD_DRAFT = {"total_claims": 3, "unsupported_claims": ["coverage 2.1x"], "diagnosis_accuracy": 0.5,
              "staleness_recognised": None, "notes": "n"}


def suggest(harness_run, reply, question="EVAL-Q01", model="openai:gpt-4o", error_kind=None):
    runner, made = harness_run
    run_id, _ = made["AGT-902"]
    runner.execute("INSERT INTO brain_eval_judge_suggestion (eval_run_id, question_id, model, recorded, response_json, "
                   "error_kind) VALUES (%s, %s, %s, false, %s, %s)",
                   (run_id, question, model, None if reply is None else Jsonb(reply), error_kind))
    return runner.execute("SELECT contributes, error_kind, total_claims, unsupported_claims, diagnosis_accuracy::float, "
                          "staleness_recognised, same_family FROM brain_eval_judge_suggestion "
                          "WHERE question_id = %s AND model = %s", (question, model)).fetchone()


def test_a_good_draft_contributes_and_judges_keep_their_own(harness_run):
    answer(harness_run, [claim()])
    assert suggest(harness_run, GOOD_DRAFT) == (True, None, 3, ["coverage 2.1x"], 0.5, None, False)
    assert suggest(harness_run, {**GOOD_DRAFT, "diagnosis_accuracy": 1, "unsupported_claims": []},
                   model="anthropic:claude-opus-4-7") == (True, None, 3, [], 1.0, None, True)


def test_staleness_is_drafted_exactly_on_stale_fixture_questions(harness_run):
    answer(harness_run, [claim()], question="EVAL-Q03")
    assert suggest(harness_run, GOOD_DRAFT, question="EVAL-Q03")[:2] == (False, "incomplete")
    assert suggest(harness_run, {**GOOD_DRAFT, "staleness_recognised": False}, question="EVAL-Q03",
                   model="anthropic:claude-opus-4-7")[:6] == (True, None, 3, ["coverage 2.1x"], 0.5, False)
    answer(harness_run, [claim()])
    assert suggest(harness_run, {**GOOD_DRAFT, "staleness_recognised": True})[5] is None


@pytest.mark.parametrize("reply, kind", [
    (None, "parse_failed"), ([1, 2], "parse_failed"),
    ({**GOOD_DRAFT, "total_claims": None}, "incomplete"),
    ({k: v for k, v in GOOD_DRAFT.items() if k != "unsupported_claims"}, "incomplete"),
    ({**GOOD_DRAFT, "diagnosis_accuracy": None}, "incomplete"),
    ({**GOOD_DRAFT, "total_claims": 2.5}, "out_of_scale"),
    ({**GOOD_DRAFT, "total_claims": -1}, "out_of_scale"),
    ({**GOOD_DRAFT, "total_claims": 0}, "out_of_scale"),                     # one unsupported of no claims
    ({**GOOD_DRAFT, "unsupported_claims": [3]}, "out_of_scale"),
    ({**GOOD_DRAFT, "diagnosis_accuracy": 0.7}, "out_of_scale"),
])
def test_a_bad_draft_does_not_contribute_and_says_why(harness_run, reply, kind):
    answer(harness_run, [claim()])
    assert suggest(harness_run, reply)[:4] == (False, kind, None, None)


def test_what_the_database_reads_cannot_be_supplied(harness_run):
    answer(harness_run, [claim()])
    runner, made = harness_run
    with pytest.raises(errors.InsufficientPrivilege):
        runner.execute("INSERT INTO brain_eval_judge_suggestion (eval_run_id, question_id, model, recorded, total_claims) "
                       "VALUES (%s, 'EVAL-Q01', 'openai:gpt-4o', false, 3)", (made["AGT-902"][0],))
    with pytest.raises(errors.InsufficientPrivilege, match="error_kind incomplete is the database's to decide"):
        suggest(harness_run, GOOD_DRAFT, error_kind="incomplete")
    assert suggest(harness_run, None, model="google:gemini-1.5-pro", error_kind="provider_error")[:2] == (
        False, "provider_error")


def test_a_suggestion_needs_an_answer(harness_run):
    with pytest.raises(errors.ForeignKeyViolation):
        suggest(harness_run, GOOD_DRAFT, question="EVAL-Q02")


def test_a_reviewer_reads_the_answers_of_its_own_harness_runs_only(harness_run, connect_as):
    from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE

    answer(harness_run, [claim()])
    answer(harness_run, [claim()], brain="AGT-901")
    own = connect_as(REVIEWER_ROLE)
    assert own.execute("SELECT count(*) FROM evalledger.brain_analysis_log").fetchone()[0] == 2
    assert own.execute("SELECT count(*) FROM evalledger.brain_eval_harness_answer").fetchone()[0] == 2
    other = connect_as(OTHER_REVIEWER_ROLE)
    for table in ("brain_analysis_log", "brain_eval_harness_answer", "brain_eval_harness_run"):
        assert other.execute(f"SELECT count(*) FROM evalledger.{table}").fetchone()[0] == 0, table


def test_a_run_takes_live_or_recorded_answers_not_both(harness_run):
    runner, made = harness_run
    run_id, version = made["AGT-902"]
    analysis_id = store.record_analysis(runner, brain="AGT-902", model_id=version.model_id,
                                        system_prompt_hash=version.system_prompt_hash, question_id="EVAL-Q01",
                                        question="q", output="o", token_cost_usd=0)
    with pytest.raises(errors.CheckViolation, match="takes live answers only"):
        runner.execute("INSERT INTO brain_eval_harness_answer (eval_run_id, question_id, analysis_id, recorded) "
                       "VALUES (%s, 'EVAL-Q01', %s, true)", (run_id, analysis_id))


def test_results_stored_together_are_stored_whole_or_not_at_all(dsn):
    """A batch of answers that came back together shares one transaction: when storing the second
    fails, the first of the batch is not left behind (a resumed run asks for both again); the
    batch before it stays."""
    import asyncio

    from evalledger.judges.providers import JudgeCall
    from evalledger.judges.specs import parse_model_spec
    from evalledger.suites.brain_eval.harness import stored_together

    spec = parse_model_spec("anthropic:claude-sonnet-4-6")
    with psycopg.connect(dsn) as conn:
        conn.execute("CREATE TEMP TABLE stored (key text)")
        conn.commit()

        def store(call):
            if call.key == "broken":
                raise RuntimeError("the second answer's write was refused")
            conn.execute("INSERT INTO stored VALUES (%s)", (call.key,))
            return [call.key]

        batch = stored_together(conn, store)
        assert asyncio.run(batch([JudgeCall(spec=spec, key="Q1")])) == [["Q1"]]
        with pytest.raises(RuntimeError, match="refused"):
            asyncio.run(batch([JudgeCall(spec=spec, key="Q2"), JudgeCall(spec=spec, key="broken")]))
        assert conn.execute("SELECT key FROM stored").fetchall() == [("Q1",)]
