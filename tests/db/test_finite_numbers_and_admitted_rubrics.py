"""Numbers that are not numbers, and rubrics not checked. Every numeric and
floating-point column of the ledger CHECKs finite_v1 (no NaN, no infinity: the append-only ledger
could never be repaired), the JSON objects the database reads as numbers hold JSON numbers only,
every suite's runs go through rubric admission (rubric_admitted_v2: activated, and passing today's
check, which requires a judged suite's scale), and takes-quality's panel is rubric policy (three
models or more, two families or more). Tried as the runner's and the owner's own logins
(docs/guards.md, section 20)."""

from __future__ import annotations

import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from tests.db.insider_logins import logins, refused  # noqa: F401 (fixture)

NOT_NUMBERS = ["NaN", "Infinity", "-Infinity"]
PANEL = ["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"]


def test_every_numeric_column_of_the_ledger_checks_that_it_is_finite(admin):
    columns = admin.execute(
        "SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
        "WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition "
        "AND a.attnum > 0 AND NOT a.attisdropped "
        "AND a.atttypid IN ('numeric'::regtype, 'double precision'::regtype, 'real'::regtype) ORDER BY 1, 2").fetchall()
    assert len(columns) >= 15, columns  # a catalog query that found none would prove nothing
    checked = {(t, c) for t, c in admin.execute(
        "SELECT c.relname, a.attname FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
        "JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = ANY (k.conkey) "
        "WHERE k.contype = 'c' AND pg_get_constraintdef(k.oid) ~ 'finite_v1\\(' "
        "AND k.conname = c.relname || '_' || a.attname || '_finite'")}
    assert [c for c in columns if c not in checked] == []


@pytest.mark.parametrize("value", NOT_NUMBERS)
def test_no_role_writes_a_number_that_is_not_one(admin, logins, value):
    """The attempts once seen to succeed (a work-quality run's cost from its --metrics file) and their
    neighbours, each by the role that may write the row, the superuser included."""
    runner = logins("runner")
    # (statement, the constraint that refuses it: its own finite check, or an older range check that
    # is named first, CHECKs being evaluated by name)
    attempts = [
        ("INSERT INTO evalledger.eval_work_quality_snapshots (origin, kind, name, run_id, models, cost_usd) "
         "VALUES ('run', 'bot', 'b', 'r', '{openai:gpt-4o}', %s)", {"eval_work_quality_snapshots_cost_usd_finite"}),
        ("INSERT INTO evalledger.take (take_sha, slug, kind, holder, weight, since, source, claim) "
         "VALUES (repeat('a', 64), 'a/b', 'take', 'ann', %s, '2026', 's', 'c')", {"take_weight_finite"}),
        ("INSERT INTO evalledger.brain_analysis_log (brain, model_id, system_prompt_hash, question, output, "
         "token_cost_usd) VALUES ('AGT-901', 'm', repeat('a', 64), 'q', 'o', %s)",
         {"brain_analysis_log_token_cost_usd_finite", "brain_analysis_log_cost_not_negative"}),
        ("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
         "latency_ms, remote, capture_key) VALUES ('query', 'q', true, false, %s, false, gen_random_uuid())",
         {"eval_candidates_latency_finite", "eval_candidates_latency_ms_finite"}),
    ]
    for conn in (runner, admin):
        for statement, constraints in attempts:
            with _refused_by(admin, constraints):
                conn.execute(statement, (value,))


class _refused_by:
    """The block is refused with a CHECK violation of one of `constraints` (or, for an infinity in a
    numeric of fixed precision, by the type itself: it holds NaN, not infinity), every row count unchanged."""

    def __init__(self, admin, constraints):
        self.admin, self.constraints = admin, constraints

    def __enter__(self):
        from tests.db.insider_logins import row_counts
        self.before = row_counts(self.admin)

    def __exit__(self, kind, exc, tb):
        from tests.db.insider_logins import row_counts
        if isinstance(exc, errors.NumericValueOutOfRange):
            assert "cannot hold an infinite value" in exc.diag.message_detail
        else:
            assert isinstance(exc, errors.CheckViolation), exc
            assert exc.diag.constraint_name in self.constraints, exc.diag.constraint_name
        assert row_counts(self.admin) == self.before
        return True


def work_quality_import(**metrics_and_scores) -> dict:
    dims = ["efficacy", "completeness", "output_quality", "restraint", "reliability", "value_for_money", "overall"]
    return {"schema_version": 1, "kind": "bot", "name": "b", "run_id": "r", "at": "2026-01-01T00:00:00Z",
            "metrics": {"cost_usd": metrics_and_scores.get("cost_usd", 0.01), "tokens": 10},
            "aggregate": {"mean_scores": {d: metrics_and_scores.get("score", 0.5) for d in dims}, "note": ""}}


@pytest.mark.parametrize("document, constraint", [
    ({**work_quality_import(), "prev_run_id": "r0", "comparison": {"prev_run_id": "r0", "overall_delta": "NaN",
                                                                    "value_delta": 0, "verdict": "same"}},
     "eval_work_quality_snapshots_comparison_numbers"),
    (work_quality_import(cost_usd="NaN"), "eval_work_quality_snapshots_cost_usd_finite"),
    (work_quality_import(cost_usd="Infinity"), "eval_work_quality_snapshots_cost_usd_finite"),
    (work_quality_import(score="NaN"), "eval_work_quality_snapshots_mean_scores_numbers"),
])
def test_a_history_file_with_a_string_that_casts_to_nan_is_refused(admin, logins, document, constraint):
    """JSON has no NaN, but a string "NaN" read as a number would be one."""
    with refused(admin, errors.CheckViolation, r'new row for relation "eval_work_quality_snapshots" violates check '
                 r'constraint "\w+"', constraint):
        logins("runner").execute("INSERT INTO evalledger.eval_work_quality_snapshots (origin, kind, name, run_id, models, "
                                 "snapshot_json, source_file) VALUES ('import', 'bot', 'x', 'x', '{}', %s, 'f.json')",
                                 (Jsonb(document),))


def test_a_work_quality_run_names_only_an_admitted_rubric(admin, logins):
    """A rubric registered but never activated (here one without a scale, which the check now
    refuses at registration too) judges no run: a judge's 1000 would otherwise count."""
    owner = logins("owner")
    definition = admin.execute("SELECT definition FROM evalledger.rubric WHERE suite = 'work-quality'").fetchone()[0]
    no_scale = {k: v for k, v in definition.items() if k != "scale"} | {"version": "v9"}
    with refused(admin, errors.CheckViolation, "evalledger: rubric work-quality v9: scale needs numeric min < max",
                 "rubric_definition_valid"):
        owner.execute("INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('work-quality', 'v9', %s)",
                      (Jsonb(no_scale),))
    owner.execute("INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('work-quality', 'v9', %s)",
                  (Jsonb(definition | {"version": "v9"}),))
    v9 = admin.execute("SELECT rubric_id FROM evalledger.rubric WHERE (suite, version) = ('work-quality', 'v9')").fetchone()[0]
    with refused(admin, errors.ForeignKeyViolation, rf"evalledger: rubric {v9} is not an activated work-quality rubric"):
        logins("runner").execute("INSERT INTO evalledger.eval_work_quality_snapshots (origin, rubric_id, kind, name, "
                                 "run_id, models) VALUES ('run', %s, 'bot', 'b', 'r', '{openai:gpt-4o}')", (v9,))


def test_a_rubric_without_a_scale_admits_no_score(admin):
    """Belt and braces, should one ever judge: judge_scores_v2 finds every score out of a missing scale."""
    got = admin.execute("SELECT evalledger.judge_scores_v2('{\"a\": 1000}', '{\"dimensions\": [{\"key\": \"a\"}]}')"
                        ).fetchone()[0]
    assert got == {"error_kind": "out_of_scale", "error_message": "the rubric has no scale"}


def takes_run(conn, models, **extra):
    values = {"corpus_source": "db", "sample_limit": 10, "seed": 1, "n_takes": 3, "corpus_sha8": "aaaaaaaa",
              "prompt_sha8": "bbbbbbbb", "models": models, **extra}
    return conn.execute(f"INSERT INTO evalledger.eval_takes_quality_runs ({', '.join(values)}) "
                        f"VALUES ({', '.join(f'%({k})s' for k in values)}) RETURNING id", values).fetchone()[0]


@pytest.mark.parametrize("models, says", [
    (["openai:gpt-4o"], "not 1 from 1"),
    (["openai:gpt-4o", "anthropic:claude-opus-4-7"], "not 2 from 2"),
    (["openai:gpt-4o", "openai:gpt-4.1", "openai:o3"], "not 3 from 1"),
])
def test_a_takes_quality_panel_is_as_large_and_as_cross_family_as_the_rubric_asks(admin, logins, models, says):
    """A panel of one model decided pass before. Seed 000: three frontier models; the design: a
    cross-family panel. Rubric v1.1's panel policy, checked at admission."""
    with refused(admin, errors.CheckViolation, rf"evalledger: a takes-quality panel needs at least 3 models from at least "
                 rf"2 families, {says}", "eval_takes_quality_runs_panel_policy"):
        takes_run(logins("runner"), models)
    assert takes_run(logins("runner"), ["openai:gpt-4o", "openai:gpt-4.1", "google:gemini-1.5-pro"]) > 0


def test_the_rubric_before_the_panel_policy_judges_no_new_run(admin, logins):
    """Naming v1.0 (activated once, before the panel policy) would dodge it: refused."""
    v1_0 = admin.execute("SELECT rubric_id FROM evalledger.rubric WHERE (suite, version) = ('takes-quality', 'v1.0')"
                         ).fetchone()[0]
    with refused(admin, errors.ForeignKeyViolation, rf"evalledger: rubric {v1_0} judges no new takes-quality run: panel "
                 r"needs whole numbers min_models >= 3 .*", "rubric_definition_valid"):
        takes_run(logins("runner"), ["openai:gpt-4o"], rubric_id=v1_0)


@pytest.mark.parametrize("panel, says", [
    ({"min_models": 1, "min_families": 1}, "panel needs whole numbers"),
    ({"min_models": 3, "min_families": 1}, "panel needs whole numbers"),
    ({"min_models": 3, "min_families": 4}, "panel needs whole numbers"),
    (None, "panel needs whole numbers"),
])
def test_no_rubric_loosens_the_panel(admin, logins, panel, says):
    definition = admin.execute("SELECT definition FROM evalledger.rubric WHERE rubric_id = "
                               "evalledger.active_rubric_v1('takes-quality')").fetchone()[0]
    definition = {k: v for k, v in definition.items() if k != "panel"} | {"version": "v9"}
    if panel:
        definition["panel"] = panel
    with refused(admin, errors.CheckViolation, rf"evalledger: rubric takes-quality v9: {says}.*", "rubric_definition_valid"):
        logins("owner").execute("INSERT INTO evalledger.rubric (suite, version, definition) "
                                "VALUES ('takes-quality', 'v9', %s)", (Jsonb(definition),))


@pytest.mark.parametrize("metrics", ['{"cost_usd": NaN}', '{"cost_usd": Infinity}', '{"cost_usd": -Infinity}'])
def test_a_metrics_file_with_nan_is_refused_by_the_command_with_nothing_written(admin, dsn, standin, tmp_path, metrics):
    """The attempt once seen to succeed, end to end: `run work-quality --metrics` with a NaN (which Python's json
    reads) completed a snapshot whose cost was NaN. Refused now: one line, exit 3, no row."""
    from click.testing import CliRunner

    from evalledger.cli import cli

    work, path = tmp_path / "fix.diff", tmp_path / "m.json"
    work.write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-return a - b\n+return a + b\n")
    path.write_text(metrics)
    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home"),
           "EVALLEDGER_WORK_QUALITY_MODELS": None}
    result = CliRunner().invoke(cli, ["run", "work-quality", "--kind", "bot", "--name", "review-pr", "--task", "fix",
                                      "--work-product", str(work), "--models", "openai:gpt-4o", "--retries", "0", "--deadline", "0",
                                      "--metrics", str(path)], env=env, catch_exceptions=False)
    assert result.exit_code == 3, result.output
    assert result.output.count("\n") == 1
    # The door refuses the literal itself, naming file, line and field, before the database sees it.
    assert f"{path}:1: $.cost_usd: " in result.output and "is not a number" in result.output
    assert admin.execute("SELECT count(*) FROM evalledger.eval_work_quality_snapshots").fetchone()[0] == 0
