"""A model call's cost is the database's (issue 38, item 3): computed from the usage its reply
reported (every token class: fresh input, cached input, cache writes, output) and the price the row
carries, whatever cost the caller sends; the usage and the price are bounded. The stand-in's cached
tokens, reported each provider's way, land in the stored cost at the cached price."""

from __future__ import annotations

import asyncio
import datetime
from decimal import Decimal

import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from evalledger.judges import money
from evalledger.judges.providers import JudgeRequest, run_calls
from evalledger.suites.brain_eval import store as brain_store
from evalledger.suites.takes_quality import store as takes_store
from tests.builders import BRAIN_PROMPTS, register_prompt
from tests.db.insider_logins import logins, refused  # noqa: F401 (fixture)

pytest_plugins = ["tests.standin.fixtures"]

PANEL = ["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"]
DIMS = ["accuracy", "attribution", "weight_calibration", "kind_classification", "signal_density"]
CALL_TABLES = ["brain_analysis_log", "brain_eval_judge_suggestion", "eval_takes_quality_judge_verdicts",
               "eval_work_quality_judge_verdicts"]
# gpt-4o's rates as a row carries them (USD per million tokens), and the day they were taken.
PRICE = {"price_input": Decimal("2.5"), "price_cached_input": Decimal("1.25"),
         "price_cache_write": Decimal("2.5"), "price_output": Decimal("10"),
         "price_as_of": datetime.date(2026, 1, 15)}


def start_run(conn, n: int = 1) -> int:
    # A subject of its own per n (its slug prefix): one run of a subject is open at a time.
    values = {"corpus_source": "db", "sample_limit": 10, "seed": 1, "n_takes": 3, "corpus_sha8": f"{n:08x}",
              "prompt_sha8": "bbbbbbbb", "models": PANEL, "slug_prefix": f"billed-{n}"}
    cols = ", ".join(values)
    marks = ", ".join(f"%({k})s" for k in values)
    return conn.execute(f"INSERT INTO evalledger.eval_takes_quality_runs ({cols}) VALUES ({marks}) RETURNING id",
                        values).fetchone()[0]


def verdict(conn, run_id, **extra):
    values = {"run_id": run_id, "cycle": 1, "model": PANEL[0], "recorded": False,
              "response_json": Jsonb({"scores": {d: 8 for d in DIMS}, "feedback": "fine", "improvements": ["x"]}),
              **extra}
    cols = ", ".join(values)
    marks = ", ".join(f"%({k})s" for k in values)
    return conn.execute(f"INSERT INTO evalledger.eval_takes_quality_judge_verdicts ({cols}) VALUES ({marks}) "
                        "RETURNING cost_usd", values).fetchone()[0]


def test_every_call_table_has_its_cost_computed_before_its_other_triggers(admin):
    bound = admin.execute(
        "SELECT c.relname, (SELECT array_agg(t2.tgname ORDER BY t2.tgname) FROM pg_trigger t2"
        "                    WHERE t2.tgrelid = c.oid AND NOT t2.tgisinternal"
        "                      AND t2.tgtype & 2 = 2 AND t2.tgtype & 4 = 4) AS befores"  # BEFORE INSERT
        "  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
        " WHERE t.tgfoid = 'evalledger.call_cost_stamp_v1'::regproc AND t.tgenabled = 'A'"
        " ORDER BY c.relname").fetchall()
    assert [name for name, _ in bound] == CALL_TABLES
    for name, befores in bound:
        assert befores[0] == f"{name}_03_cost", befores


def test_the_database_computes_the_cost_from_the_usage_and_the_price_whatever_the_runner_sends(logins):
    runner = logins("runner")
    run_id = start_run(runner)
    stored = verdict(runner, run_id, input_tokens=4000, cached_input_tokens=3072, cache_write_tokens=0,
                     output_tokens=120, cost_usd=99, **PRICE)
    # 928 fresh at $2.50, 3,072 cached at $1.25, 120 out at $10 per million.
    assert stored == Decimal("0.00736")
    assert stored == money.cost("openai:gpt-4o", 4000, 120, 3072, 0)
    # Without a price (a recorded reply, an unpriced model), the row keeps the cost it is given.
    assert verdict(runner, start_run(runner, 2), input_tokens=10, output_tokens=1, cost_usd=0) == 0


def test_the_brains_own_analysis_is_priced_by_the_database_too(admin, logins):
    register_prompt(admin, "AGT-901", BRAIN_PROMPTS["AGT-901"])
    runner = logins("runner")
    analysis = brain_store.record_analysis(
        runner, brain="AGT-901", origin="production", model_id="claude-sonnet-4-6",
        system_prompt_hash=BRAIN_PROMPTS["AGT-901"], question="q", output="o", token_cost_usd=5,
        **money.billed("anthropic:claude-sonnet-4-6", input_tokens=5000, cached_input_tokens=4000,
                       cache_write_tokens=500, output_tokens=200))
    cost = admin.execute("SELECT token_cost_usd FROM evalledger.brain_analysis_log WHERE analysis_id = %s",
                         (analysis,)).fetchone()[0]
    # 500 fresh at $3, 4,000 read at $0.30, 500 written at $3.75, 200 out at $15 per million.
    assert cost == Decimal("0.007575") == money.cost("anthropic:claude-sonnet-4-6", 5000, 200, 4000, 500)


@pytest.mark.parametrize("extra, message, constraint", [
    ({"input_tokens": 100, "cached_input_tokens": 80, "cache_write_tokens": 21},
     "new row .* violates check constraint .*", "eval_takes_quality_judge_verdicts_cache_tokens_within_input"),
    ({"input_tokens": 100, "cached_input_tokens": -1},
     "new row .* violates check constraint .*", "eval_takes_quality_judge_verdicts_cache_tokens_within_input"),
    ({"input_tokens": 100, "cached_input_tokens": 2147483647, "cache_write_tokens": 2147483647},
     "new row .* violates check constraint .*", "eval_takes_quality_judge_verdicts_cache_tokens_within_input"),
    ({**PRICE, "price_output": None},
     "new row .* violates check constraint .*", "eval_takes_quality_judge_verdicts_price_whole"),
    ({**PRICE, "price_input": Decimal("-1")},
     "new row .* violates check constraint .*", "eval_takes_quality_judge_verdicts_price_bounded"),
    ({**PRICE, "price_output": Decimal("1e7")},
     "new row .* violates check constraint .*", "eval_takes_quality_judge_verdicts_price_bounded"),
    ({**PRICE, "price_cached_input": Decimal("NaN")},
     "new row .* violates check constraint .*", "eval_takes_quality_judge_verdicts_price_bounded"),
    ({**PRICE, "price_output": Decimal("Infinity")},
     "new row .* violates check constraint .*", "eval_takes_quality_judge_verdicts_price_bounded"),
    ({**PRICE, "price_as_of": datetime.date(2019, 12, 31)},
     "new row .* violates check constraint .*", "eval_takes_quality_judge_verdicts_price_bounded"),
])
def test_usage_and_price_out_of_bounds_are_refused(admin, logins, extra, message, constraint):
    runner = logins("runner")
    run_id = start_run(runner)
    with refused(admin, errors.CheckViolation, message, constraint):
        verdict(runner, run_id, **extra)


def test_a_price_taken_after_today_is_refused_by_the_databases_clock(admin, logins):
    runner = logins("runner")
    run_id = start_run(runner)
    today = admin.execute("SELECT (statement_timestamp() AT TIME ZONE 'UTC')::date").fetchone()[0]
    for zone in ("Pacific/Kiritimati", "Pacific/Pago_Pago"):  # the writer's zone moves nothing
        runner.execute(f"SET TimeZone = '{zone}'")
        with refused(admin, errors.CheckViolation, r"evalledger: price_as_of .* is after today: .*",
                     "eval_takes_quality_judge_verdicts_price_taken"):
            verdict(runner, run_id, **{**PRICE, "price_as_of": today + datetime.timedelta(days=2)})
    # Tomorrow in UTC is today somewhere: admitted.
    assert verdict(runner, run_id, **{**PRICE, "price_as_of": today + datetime.timedelta(days=1)}) == 0


def _two_calls(standin, spec: str):
    system = "You judge a sample of takes against the rubric.\n" + "".join(
        f"- rule {n}: a take that breaks rule {n} loses a point.\n" for n in range(120))
    calls = []
    for item in ("first sample", "second sample"):
        request = JudgeRequest(spec, system=system, user=item, json_schema=None)
        calls += asyncio.run(run_calls([request], timeout_s=10, env=standin.env()))
    return calls


@pytest.mark.parametrize("spec", ["openai:gpt-4o", "anthropic:claude-opus-4-7"])
def test_the_stand_ins_cached_tokens_land_in_the_stored_cost_at_the_cached_price(standin, admin, logins, spec):
    runner = logins("runner")
    first, second = _two_calls(standin, spec)
    assert second.cached_input_tokens > 0  # the stand-in read the repeated prefix from its cache
    costs = []
    for n, call in enumerate((first, second), start=1):
        run_id = start_run(runner, n)
        call.parsed = {"scores": {d: 8 for d in DIMS}, "feedback": "fine", "improvements": []}
        takes_store.record_verdict(runner, run_id, 1, call, recorded=False)
        costs.append(admin.execute(
            "SELECT input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, cost_usd"
            "  FROM evalledger.eval_takes_quality_judge_verdicts WHERE run_id = %s", (run_id,)).fetchone())
    rates = money.billed(spec, input_tokens=0, cached_input_tokens=0, cache_write_tokens=0, output_tokens=0)
    for (input_tokens, cached, written, output, cost), call in zip(costs, (first, second)):
        assert (input_tokens, cached, written, output) == (call.input_tokens, call.cached_input_tokens,
                                                           call.cache_write_tokens, call.output_tokens)
        assert cost == ((input_tokens - cached - written) * rates["price_input"]
                        + cached * rates["price_cached_input"] + written * rates["price_cache_write"]
                        + output * rates["price_output"]) / 1_000_000
    assert costs[1][4] < money.cost(spec, second.input_tokens, second.output_tokens)  # cheaper than list


def test_a_gemini_batchs_cached_tokens_land_in_the_stored_cost_at_the_batch_cached_price(standin, admin, logins):
    """Gemini's batch mode (the google-genai SDK against the stand-in): the second request's
    repeated prefix comes back as cachedContentTokenCount, inside promptTokenCount; stored, the
    call costs its fresh input, cached input and output at the batch rates (half of list, the
    cached rate scaled alike)."""
    from evalledger.judges import batch

    system = "You judge a sample of takes against the rubric.\n" + "".join(
        f"- rule {n}: a take that breaks rule {n} loses a point.\n" for n in range(120))
    spec = "google:gemini-1.5-pro"  # on the run's panel
    requests = [JudgeRequest(spec, system=system, user=item, json_schema=None) for item in ("first", "second")]
    lines = [batch.request_line(f"b1-{n}", r) for n, r in enumerate(requests, start=1)]

    async def submitted_and_read():
        api = batch.api_for("google", env=standin.env())
        try:
            name = await api.submit(1, lines)
            status, _, found = await api.status(name)
            assert status == "completed"
            return await api.results(found)
        finally:
            await api.aclose()

    results = asyncio.run(submitted_and_read())
    calls = [batch._call(r, results[f"b1-{n}"][0], None, "succeeded", 0) for n, r in enumerate(requests, start=1)]
    assert calls[0].cached_input_tokens == 0 and calls[1].cached_input_tokens > 1024
    runner = logins("runner")
    rates = money.billed(spec, input_tokens=0, cached_input_tokens=0, cache_write_tokens=0, output_tokens=0, batch=True)
    listed = money.billed(spec, input_tokens=0, cached_input_tokens=0, cache_write_tokens=0, output_tokens=0)
    assert rates["price_input"] * 2 == listed["price_input"]
    assert rates["price_cached_input"] * 2 == listed["price_cached_input"]
    for n, call in enumerate(calls, start=1):
        run_id = start_run(runner, n)
        call.parsed = {"scores": {d: 8 for d in DIMS}, "feedback": "fine", "improvements": []}
        takes_store.record_verdict(runner, run_id, 1, call, recorded=False)
        input_tokens, cached, output, price_cached, cost = admin.execute(
            "SELECT input_tokens, cached_input_tokens, output_tokens, price_cached_input, cost_usd"
            "  FROM evalledger.eval_takes_quality_judge_verdicts WHERE run_id = %s", (run_id,)).fetchone()
        assert (input_tokens, cached, output) == (call.input_tokens, call.cached_input_tokens, call.output_tokens)
        assert price_cached == rates["price_cached_input"]
        assert cost == ((input_tokens - cached) * rates["price_input"] + cached * rates["price_cached_input"]
                        + output * rates["price_output"]) / 1_000_000
