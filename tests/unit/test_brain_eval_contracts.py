"""The view-contracts hash without a database: what the canonical form ignores (spelling) and what
it keeps (meaning), and the definitions PostgreSQL 15 and 18 print for the same views."""

from __future__ import annotations

import itertools

import pytest

from evalledger.core.errors import EvalledgerError
from evalledger.suites.brain_eval import contracts

BASE = "SELECT a.region, o.stage, sum(o.amount) AS amount FROM brain.opportunities o JOIN brain.accounts a " \
       "ON a.account_id = o.account_id WHERE o.stage IN ('commit', 'best_case') AND o.amount > 100::numeric " \
       "GROUP BY a.region, o.stage"

SAME_CONTRACT = [
    # whitespace, comments and keyword case
    "select a.region,o.stage,SUM(o.amount) as amount\n\tfrom brain.opportunities o -- the deals\n"
    "  join brain.accounts a on a.account_id=o.account_id /* owner */\n where o.stage in ('commit','best_case')"
    " and o.amount>100::NUMERIC group by a.region,o.stage;",
    # unquoted identifiers in any case, quoted lower-case ones
    'SELECT A.Region, O.STAGE, Sum(O.Amount) AS "amount" FROM Brain.Opportunities O JOIN brain."accounts" a '
    "ON a.account_id = o.account_id WHERE o.stage IN ('commit', 'best_case') AND o.amount > 100::numeric "
    "GROUP BY a.region, o.stage",
    # redundant parentheses, and the way PostgreSQL prints IN, INNER JOIN and text literals
    "SELECT a.region, o.stage, sum(o.amount) AS amount FROM opportunities o INNER JOIN accounts a "
    "ON ((a.account_id = o.account_id)) WHERE ((o.stage = ANY (ARRAY['commit'::text, 'best_case'::text])) "
    "AND ((o.amount) > (100::numeric))) GROUP BY a.region, o.stage",
]

CHANGED_MEANING = {
    "another constant": BASE.replace("> 100::numeric", "> 101::numeric"),
    "another comparison": BASE.replace("> 100::numeric", ">= 100::numeric"),
    "another column": BASE.replace("sum(o.amount)", "sum(o.weighted_amount)"),
    "another alias": BASE.replace("AS amount", "AS total"),
    "another aggregate": BASE.replace("sum(o.amount)", "avg(o.amount)"),
    "another table": BASE.replace("brain.accounts a", "brain.customers a"),
    "another schema": BASE.replace("brain.accounts a", "archive.accounts a"),
    "an outer join": BASE.replace(" JOIN ", " LEFT JOIN "),
    "another stage": BASE.replace("'best_case'", "'pipeline'"),
    "NOT IN": BASE.replace("o.stage IN", "o.stage NOT IN"),
    "OR for AND": BASE.replace(" AND o.amount", " OR o.amount"),
    "another cast": BASE.replace("100::numeric", "100::integer"),
    "a case-sensitive name": BASE.replace("sum(o.amount) AS amount", 'sum(o.amount) AS "Amount"'),
    "another column order": BASE.replace("SELECT a.region, o.stage,", "SELECT o.stage, a.region,"),
    "DISTINCT": BASE.replace("SELECT ", "SELECT DISTINCT "),
    "a HAVING": BASE + " HAVING sum(o.amount) > 0::numeric",
    "an ORDER BY": BASE + " ORDER BY amount",
    "a swapped join condition": BASE.replace("a.account_id = o.account_id", "a.account_id = o.owner_id"),
}


def canon(text: str) -> str:
    return contracts.canonical_sql(text, schema="brain")


def test_spelling_does_not_change_the_canonical_form():
    expected = canon(BASE)
    for variant in SAME_CONTRACT:
        assert canon(variant) == expected, variant


@pytest.mark.parametrize("what", sorted(CHANGED_MEANING))
def test_any_change_of_meaning_changes_it(what):
    assert canon(CHANGED_MEANING[what]) != canon(BASE)


def test_changed_meanings_are_all_different_from_each_other():
    forms = [canon(text) for text in CHANGED_MEANING.values()]
    assert len(set(forms)) == len(forms)


@pytest.mark.parametrize("left, right", [
    ("x = 1 AND (y = 2 OR z = 3)", "(x = 1 AND y = 2) OR z = 3"),
    ("(a + b) * c > 0", "a + b * c > 0"),
    ("NOT (x = 1 AND y = 2)", "NOT x = 1 AND y = 2"),
    ("x BETWEEN 1 AND 2", "x NOT BETWEEN 1 AND 2"),
    ("x = 1", "x = '1'"),
    ("name LIKE 'A%'", "name ILIKE 'A%'"),
])
def test_needed_parentheses_and_operators_are_kept(left, right):
    assert canon(f"SELECT 1 FROM t WHERE {left}") != canon(f"SELECT 1 FROM t WHERE {right}")


@pytest.mark.parametrize("left, right", [
    ("x = 1 AND (y = 2 AND z = 3)", "(x = 1 AND y = 2) AND z = 3"),
    ("x BETWEEN 1 AND 2", "x >= 1 AND x <= 2"),
    ("x NOT BETWEEN 1 AND 2", "x < 1 OR x > 2"),
    ("x NOT IN (1, 2)", "x <> ALL (ARRAY[1, 2])"),
    ("x != 1", "x <> 1"),
    ("name LIKE 'A%'", "name ~~ 'A%'::text"),
    ("(((x)) = (1))", "x = 1"),
])
def test_what_postgresql_stores_the_same_is_the_same(left, right):
    assert canon(f"SELECT 1 FROM t WHERE {left}") == canon(f"SELECT 1 FROM t WHERE {right}")


# pg_get_viewdef of the same five views on PostgreSQL 15.18 and 18.4 (search_path = the views' schema).
PG15 = {
    "v_active_accounts": """ SELECT accounts.account_id,
    accounts.name,
    accounts.arr
   FROM accounts
  WHERE accounts.status = 'active'::text AND accounts.arr > 1000::numeric;""",
    "v_churn": """ SELECT accounts.account_id,
        CASE
            WHEN accounts.closed_on IS NULL THEN 'open'::text
            ELSE 'closed'::text
        END AS state,
    COALESCE(accounts.arr, 0::numeric) * 1.1 AS arr_next,
    accounts.name ~~ 'A%'::text AS a_name,
    accounts.closed_on >= '2026-01-01'::date AND accounts.closed_on <= '2026-03-31'::date AS q1
   FROM accounts
  WHERE accounts.region <> 'APAC'::text OR accounts.arr >= 10::numeric AND accounts.arr < 20::numeric;""",
    "v_cte": """ WITH r AS (
         SELECT accounts.region,
            max(accounts.arr) AS m
           FROM accounts
          GROUP BY accounts.region
        )
 SELECT r.region,
    r.m
   FROM r
  ORDER BY r.m DESC
 LIMIT 5;""",
    "v_pipeline": """ SELECT a.region,
    o.stage,
    sum(o.amount) AS amount,
    count(*) AS n
   FROM opportunities o
     JOIN accounts a ON a.account_id = o.account_id
  WHERE (o.stage = ANY (ARRAY['commit'::text, 'best_case'::text])) AND o.created_at >= (now() - '90 days'::interval)
  GROUP BY a.region, o.stage;""",
    "v_sub": """ SELECT x.region,
    x.total
   FROM ( SELECT accounts.region,
            sum(accounts.arr) AS total
           FROM accounts
          GROUP BY accounts.region) x
  WHERE x.total > 0::numeric;""",
}
PG18 = {
    "v_active_accounts": """ SELECT account_id,
    name,
    arr
   FROM accounts
  WHERE status = 'active'::text AND arr > 1000::numeric;""",
    "v_churn": """ SELECT account_id,
        CASE
            WHEN closed_on IS NULL THEN 'open'::text
            ELSE 'closed'::text
        END AS state,
    COALESCE(arr, 0::numeric) * 1.1 AS arr_next,
    name ~~ 'A%'::text AS a_name,
    closed_on >= '2026-01-01'::date AND closed_on <= '2026-03-31'::date AS q1
   FROM accounts
  WHERE region <> 'APAC'::text OR arr >= 10::numeric AND arr < 20::numeric;""",
    "v_cte": """ WITH r AS (
         SELECT accounts.region,
            max(accounts.arr) AS m
           FROM accounts
          GROUP BY accounts.region
        )
 SELECT region,
    m
   FROM r
  ORDER BY m DESC
 LIMIT 5;""",
    "v_pipeline": PG15["v_pipeline"],
    "v_sub": """ SELECT region,
    total
   FROM ( SELECT accounts.region,
            sum(accounts.arr) AS total
           FROM accounts
          GROUP BY accounts.region) x
  WHERE total > 0::numeric;""",
}


@pytest.mark.parametrize("name", sorted(PG15))
def test_postgresql_15_and_18_print_the_same_contract(name):
    assert PG15[name] != PG18[name] or name == "v_pipeline"
    assert canon(PG15[name]) == canon(PG18[name])


def test_the_contract_hash_covers_names_and_definitions_in_any_order():
    views = [contracts.View(name, canon(text)) for name, text in PG18.items()]
    first = contracts.Contracts("a", tuple(views))
    assert contracts.Contracts("b", tuple(reversed(views))).sha256 == first.sha256
    renamed = [contracts.View("v_renamed" if v.name == "v_sub" else v.name, v.canonical) for v in views]
    assert contracts.Contracts("a", tuple(renamed)).sha256 != first.sha256
    assert contracts.Contracts("a", tuple(views[:-1])).sha256 != first.sha256
    assert first.as_json()["views"] == [{"name": n, "sha256": contracts.View(n, canon(PG18[n])).sha256}
                                        for n in sorted(PG18)]


def test_canonical_form_is_stable():
    """A changed canonical form changes every recorded hash: it needs a new CANON_VERSION."""
    assert canon(PG15["v_active_accounts"]) == (
        'SELECT "account_id", "name", "arr" FROM "accounts" WHERE (("status" = \'active\') AND '
        '("arr" > CAST(1000 AS DECIMAL)))')
    assert contracts.CANON_VERSION == "canon-v1"


def test_files_in_a_folder(tmp_path):
    (tmp_path / "b.sql").write_text(
        "-- the pipeline\nCREATE OR REPLACE VIEW brain.v_pipeline AS\n" + PG15["v_pipeline"].replace("now()", "NOW()")
        + "\n\ncreate view V_Sub as " + PG15["v_sub"])
    (tmp_path / "a.sql").write_text("CREATE VIEW v_cte AS " + PG18["v_cte"])
    (tmp_path / "notes.txt").write_text("not a view")
    found = contracts.from_folder(tmp_path, "brain")
    expected = contracts.Contracts("x", tuple(contracts.View(n, canon(PG18[n])) for n in ("v_cte", "v_pipeline", "v_sub")))
    assert found.sha256 == expected.sha256
    assert sorted(v.name for v in found.views) == ["v_cte", "v_pipeline", "v_sub"]
    assert found.source == f"folder {tmp_path} schema brain"


def test_a_column_list_names_the_columns_as_postgresql_stores_them(tmp_path):
    (tmp_path / "v.sql").write_text("CREATE VIEW v (id, label) AS SELECT account_id, name FROM accounts;")
    [view] = contracts.from_folder(tmp_path).views
    assert view.canonical == canon("SELECT account_id AS id, name AS label FROM accounts")


@pytest.mark.parametrize("text, message", [
    ("CREATE TABLE t (a int);", "statement 1: not a CREATE VIEW ... AS query"),
    ("CREATE VIEW v AS SELECT 1; CREATE VIEW v AS SELECT 2;", "statement 2: view v is defined twice"),
    ("CREATE VIEW other.v AS SELECT 1;", "statement 1: view other.v is not in schema brain"),
    ("CREATE VIEW v AS SELECT FROM WHERE (;", "sqlglot cannot parse it"),
])
def test_bad_files_are_refused_with_their_name(tmp_path, text, message):
    path = tmp_path / "views.sql"
    path.write_text(text)
    with pytest.raises(EvalledgerError) as caught:
        contracts.from_folder(tmp_path, "brain")
    assert str(caught.value).startswith(str(path)) and message in str(caught.value)


def test_an_empty_or_missing_folder_is_an_error(tmp_path):
    with pytest.raises(EvalledgerError, match="no \\*.sql files"):
        contracts.from_folder(tmp_path)
    with pytest.raises(EvalledgerError, match="no such folder of CREATE VIEW files"):
        contracts.from_folder(tmp_path / "missing")
