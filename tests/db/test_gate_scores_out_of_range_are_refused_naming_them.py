"""A gate's side holding a judge's score past float8's range is refused in one line naming it
(migration 0163; found by a review). JSON's numbers are numeric, which holds 1e400 and 1e-400; a gate
reads the judges' scores as float8 (double precision), where the cast refused them with a bare
"... is out of range for type double precision" naming neither the document, the judge nor the
dimension. The gate's admission (gate_scores_in_range_v1) now reads every score of the sides first
and refuses the first past the range naming the side and its ref, the verdict or judge and the
dimension (SQLSTATE numeric_value_out_of_range), storing nothing; the functions that read scores out
of documents (work_quality_judge_scores_v1, takes_quality_paired_v1) refuse one the same way when
called directly. The bounds are the cast's own, to the last unit; a score in range reads as the
same float8 as before. At the command line, a file's 1e400 is refused at the door, exit 3."""

from __future__ import annotations

import json
import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from tests.cli import run_cli
from tests.db.test_gate_decided_by_the_database import BASE, snapshot
from tests.db.test_takes_quality_db import DIMS, PANEL, start_run, verdict

PAST = "is past the range of a double precision number (float8)"


@pytest.fixture
def runner(connect_as):
    return connect_as("evalledger_runner")


def spelled(doc: dict, number: str) -> str:
    """doc as JSON text, its "HUGE" marker spelled as the number (as a file would hold it)."""
    return json.dumps(doc).replace('"HUGE"', number)


def gates(admin) -> int:
    return admin.execute("SELECT count(*) FROM evalledger.eval_gate_decision").fetchone()[0]


def work_quality_gate(conn, a: str, b: str, mode: str = "significant"):
    return conn.execute(
        "INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, current_doc) "
        "VALUES ('work-quality', %s, 'a.json', 'b.json', %s::jsonb, %s::jsonb) RETURNING decision",
        (mode, a, b)).fetchone()


@pytest.mark.parametrize("number, shown", [("1e400", "1e400"), ("-2.5e400", "-2.5e400"), ("1e-400", "1e-400"),
                                           ("-3E-330", "-3e-330")])
@pytest.mark.parametrize("side", ["baseline", "current"])
def test_a_work_quality_score_past_float8_is_refused_naming_side_judge_and_dimension(runner, admin, number, shown,
                                                                                      side):
    marked = snapshot("x", BASE)
    marked["aggregate"]["verdicts"][1]["scores"]["efficacy"] = "HUGE"
    plain = json.dumps(snapshot("x", BASE))
    a, b = (spelled(marked, number), plain) if side == "baseline" else (plain, spelled(marked, number))
    before = gates(admin)
    for mode in ("default", "significant", "possible"):
        with pytest.raises(errors.NumericValueOutOfRange) as refused:
            work_quality_gate(runner, a, b, mode)
        assert refused.value.diag.message_primary == (
            f"evalledger: the {side} document ({'a' if side == 'baseline' else 'b'}.json), aggregate.verdicts[1] "
            f"(judge anthropic:claude-opus-4-7), dimension efficacy: the score {shown} {PAST}")
    assert gates(admin) == before  # nothing half-written


def test_the_first_score_past_the_range_is_named_baseline_first(runner):
    a, b = snapshot("a", BASE), snapshot("b", BASE)
    a["aggregate"]["verdicts"][2]["scores"]["overall"] = "HUGE"
    b["aggregate"]["verdicts"][0]["scores"]["efficacy"] = "HUGE"
    a["aggregate"]["verdicts"].append({"scores": {"restraint": "HUGE"}})  # a verdict naming no judge
    with pytest.raises(errors.NumericValueOutOfRange, match=r"^evalledger: the baseline document \(a\.json\), "
                       r"aggregate\.verdicts\[2\] \(judge google:gemini-1\.5-pro\), dimension overall: "):
        work_quality_gate(runner, spelled(a, "1e999"), spelled(b, "1e999"))
    del a["aggregate"]["verdicts"][2]["scores"]["overall"]
    with pytest.raises(errors.NumericValueOutOfRange, match=r"^evalledger: the baseline document \(a\.json\), "
                       r"aggregate\.verdicts\[3\] \(judge unnamed\), dimension restraint: the score 1e999 "):
        work_quality_gate(runner, spelled(a, "1e999"), spelled(b, "1e999"))


def takes_quality_receipt(runner) -> tuple[int, dict]:
    run = start_run(runner)
    for model in PANEL:
        verdict(runner, run, model, {d: 8 for d in DIMS})
    return run, runner.execute("SELECT takes_quality_complete_v1(%s)", (run,)).fetchone()[0]


@pytest.mark.parametrize("number, shown", [("1e400", "1e400"), ("1e-400", "1e-400")])
def test_a_takes_quality_baseline_score_past_float8_is_refused_naming_judge_and_dimension(runner, admin, number,
                                                                                          shown):
    run, receipt = takes_quality_receipt(runner)
    assert receipt["scores"]["accuracy"]["per_model"][PANEL[1]] == 8
    receipt["scores"]["accuracy"]["per_model"][PANEL[1]] = "HUGE"
    before = gates(admin)
    for mode in ("default", "significant", "possible"):
        with pytest.raises(errors.NumericValueOutOfRange) as refused:
            runner.execute("INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, run_id) "
                           "VALUES ('takes-quality', %s, 'baseline.json', %s, %s::jsonb, %s)",
                           (mode, f"run {run}", spelled(receipt, number), run))
        assert refused.value.diag.message_primary == (
            f"evalledger: the baseline receipt (baseline.json), judge {PANEL[1]}, dimension accuracy: "
            f"the score {shown} {PAST}")
    assert gates(admin) == before
    # The same receipt with its score in range is a gate like any other.
    runner.execute("INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, run_id) "
                   "VALUES ('takes-quality', 'significant', 'baseline.json', %s, %s::jsonb, %s)",
                   (f"run {run}", spelled(receipt, "8"), run))
    assert gates(admin) == before + 1


def test_the_readers_refuse_a_score_past_the_range_naming_it_when_called_directly(runner, admin):
    """gate_decide_v2 and the functions that read scores out of documents are granted to the runner,
    RevOps and the auditor: called directly they name the verdict, the judge and the dimension (the
    ref is the gate row's, which they do not know)."""
    marked = snapshot("b", BASE)
    marked["aggregate"]["verdicts"][0]["scores"]["overall"] = "HUGE"
    doc = spelled(marked, "1e400")
    expected = (r"^evalledger: a Snapshot document, aggregate\.verdicts\[0\] \(judge openai:gpt-4o\), "
                r"dimension overall: the score 1e400 is past the range")
    with pytest.raises(errors.NumericValueOutOfRange, match=expected):
        runner.execute("SELECT * FROM work_quality_judge_scores_v1(%s::jsonb)", (doc,))
    rubric = admin.execute("SELECT evalledger.active_rubric_v1('work-quality')").fetchone()[0]
    with pytest.raises(errors.NumericValueOutOfRange, match=expected):
        runner.execute("SELECT gate_decide_v2('work-quality', 'significant', NULL, %s, %s::jsonb, NULL, %s)",
                       (Jsonb(snapshot("a", BASE)), doc, rubric))
    _, receipt = takes_quality_receipt(runner)
    receipt["scores"]["signal_density"]["per_model"][PANEL[0]] = "HUGE"
    for baseline, now, whose in ((spelled(receipt, "1e-400"), json.dumps(receipt).replace('"HUGE"', "8"),
                                  "baseline receipt"),
                                 (json.dumps(receipt).replace('"HUGE"', "8"), spelled(receipt, "1e-400"),
                                  "run's receipt")):
        with pytest.raises(errors.NumericValueOutOfRange,
                           match=rf"^evalledger: the {whose}, judge {PANEL[0]}, dimension signal_density: "
                                 r"the score 1e-400 is past the range"):
            runner.execute("SELECT takes_quality_paired_v1(%s::jsonb, %s::jsonb, %s)", (baseline, now, DIMS))


def _exact(numerator: int, power_of_two: int) -> str:
    """numerator * 2^power_of_two as an exact decimal."""
    if power_of_two >= 0:
        return str(numerator * 2 ** power_of_two)
    digits = str(numerator * 5 ** -power_of_two).rjust(-power_of_two + 1, "0")
    return f"{digits[:power_of_two]}.{digits[power_of_two:]}"


# float8's edges: a value rounds to infinity from 2^1024 - 2^970 (halfway past the largest float8,
# a tie rounded to even: up), and a nonzero one to zero at 2^-1075 and below (halfway to the
# smallest subnormal, 2^-1074: a tie rounded to even, down).
OVER = _exact(2 ** 54 - 1, 970)
UNDER = _exact(1, -1075)
EDGES = [OVER, str(int(OVER) - 1), f"-{OVER}", str(1 - int(OVER)), UNDER, f"{UNDER}1", f"-{UNDER}", f"-{UNDER}1",
         "1.7976931348623157e308", "1.7976931348623159e308", "4.9e-324", "2.4703282292062328e-324",
         "2.4703282292062327e-324", "0", "-0", "0.0000", "1e-308", "0.1", "7.3"]
REFUSED = {OVER, f"-{OVER}", UNDER, f"-{UNDER}", "1.7976931348623159e308", "2.4703282292062327e-324"}


@pytest.mark.parametrize("number", EDGES, ids=range(len(EDGES)))
def test_the_bounds_are_the_casts_own_and_a_score_in_range_is_its_very_value(admin, number):
    try:
        cast = admin.execute("SELECT (%s::numeric)::text::float8", (number,)).fetchone()[0]
    except errors.NumericValueOutOfRange:
        cast = None
    try:
        read = admin.execute("SELECT evalledger.score_float8_v1(%s::jsonb, 'here')", (number,)).fetchone()[0]
    except errors.NumericValueOutOfRange as exc:
        assert exc.diag.message_primary.startswith("evalledger: here: the score ")
        read = None
    assert (read is None) == (cast is None), (number[:40], read, cast)
    if cast is not None:
        assert read == cast and str(read) == str(cast)
    assert (read is None) == (number in REFUSED)  # each edge on the side it is meant to test


NEAR_ZERO = [number for number in EDGES if abs(float(number)) < 1]


@pytest.mark.parametrize("number", NEAR_ZERO, ids=range(len(NEAR_ZERO)))
def test_the_door_refuses_near_zero_exactly_what_the_cast_refuses(number):
    """A file's number too near zero for a float is refused by the door, not read as 0 (which the
    database would then take): on each side of float8's last edge, the door and the cast agree."""
    from evalledger.core import reader

    try:
        read = reader.decode_json(f'{{"score": {number}}}', "receipt.json")["score"]
    except reader.InputError as exc:
        assert str(exc).startswith("receipt.json:1: $.score: ") and "nearer to zero than a float holds" in str(exc)
        read = None
    assert (read is None) == (number in REFUSED), number[:40]
    if read is not None:
        assert read == float(number)


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1e-400"])
def test_the_command_line_refuses_a_file_past_the_range_at_the_door(dsn, admin, tmp_path, number):
    """`snapshot compare` and `regress` read their files through the door, which refuses a number
    past a float's range, or too near zero for one, naming the file, line and field: exit 3, one
    line, no gate stored."""
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    before = gates(admin)
    marked = snapshot("b", BASE)
    marked["aggregate"]["verdicts"][1]["scores"]["efficacy"] = "HUGE"
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(snapshot("a", BASE), indent=1))
    b.write_text(json.dumps(marked, indent=1).replace('"HUGE"', number))
    compared = run_cli("snapshot", "compare", str(a), str(b), "--gate", "significant", env=env)
    assert compared.code == 3 and compared.out == ""
    assert compared.err.count("\n") == 1 and compared.err.startswith("evalledger: error: "), compared.err
    assert f"{b}:" in compared.err and "$.aggregate.verdicts[1].scores.efficacy" in compared.err, compared.err
    receipt = tmp_path / "baseline.json"
    receipt.write_text(json.dumps({"scores": {"accuracy": {"per_model": {PANEL[0]: "HUGE"}}}}).replace('"HUGE"', number))
    regressed = run_cli("regress", "--against", str(receipt), env=env)
    assert regressed.code == 3 and regressed.out == ""
    assert regressed.err.count("\n") == 1 and regressed.err.startswith("evalledger: error: "), regressed.err
    assert f"{receipt}:" in regressed.err and "per_model" in regressed.err, regressed.err
    assert gates(admin) == before
