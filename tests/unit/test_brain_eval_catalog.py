"""Question catalogs checked before the database sees them: the shipped demo, the shipped schema,
and a bad file refused whole with the line and JSON path of every problem."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from evalledger.core.errors import EvalledgerError
from evalledger.suites.brain_eval import catalog

DEMO = json.loads(catalog.demo_catalog_path().read_text("utf-8"))
FILE = Path("cat.json")


def refused(document_or_text) -> catalog.CatalogError:
    text = document_or_text if isinstance(document_or_text, str) else json.dumps(document_or_text, indent=2)
    with pytest.raises(catalog.CatalogError) as caught:
        catalog.check_text(text, FILE)
    return caught.value


def problem_lines(error: catalog.CatalogError) -> list[str]:
    return error.lines


def line_at(text: str, number: int) -> str:
    return text.splitlines()[number - 1]


# -- the demo catalog --------------------------------------------------------------------------------

def test_demo_catalog_is_thirty_questions_five_stale_all_eight_types():
    checked = catalog.check_file(catalog.demo_catalog_path())
    questions = checked["questions"]
    assert checked["version"] == catalog.DEMO_VERSION == "v28-2026Q2"
    assert [q["id"] for q in questions] == [f"EVAL-Q{n:02d}" for n in range(1, 31)]
    assert sum(q["uses_stale_fixture"] for q in questions) == 5
    assert set(Counter(q["type"] for q in questions)) == set(catalog.QUESTION_TYPES)
    assert len(catalog.QUESTION_TYPES) == 8


def test_demo_stale_questions_have_a_stale_source_and_say_what_to_recognise():
    for q in DEMO["questions"]:
        stale_sources = [s for s in q["sources"] if s.get("stale")]
        assert bool(stale_sources) is q["uses_stale_fixture"], q["id"]
        if q["uses_stale_fixture"]:
            assert any("old" in f or "stale" in f or "predates" in f or "ends" in f or "from last" in f
                       for f in q["pass_criteria"]["expected_findings"]), q["id"]


def test_every_demo_question_has_its_own_criteria_and_sources_with_ids():
    for q in DEMO["questions"]:
        assert {"max_hallucinations", "min_citation_rate"} <= set(q["pass_criteria"]), q["id"]
        ids = [s["id"] for s in q["sources"]]
        assert ids and len(ids) == len(set(ids)), q["id"]


def test_shipped_schema_is_valid_and_accepts_the_demo():
    schema = catalog.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(DEMO, schema)
    assert schema["$defs"]["question"]["properties"]["type"]["enum"] == list(catalog.QUESTION_TYPES)


# -- refusals with line and path -----------------------------------------------------------------------

def test_not_json_names_file_line_and_column():
    error = refused('{\n  "version": "v1",\n  "questions": [1,,]\n}')
    assert problem_lines(error) == ["cat.json:3: column 19: not JSON: Expecting value"]


def test_each_problem_names_the_line_that_holds_it():
    bad = copy.deepcopy(DEMO)
    bad["questions"][4]["type"] = "coverage_gapp"
    bad["questions"][0]["pass_criteria"]["min_citation_rate"] = 1.5
    bad["questions"][9]["sources"][0]["as_of"] = "31/05/2026"
    text = json.dumps(bad, indent=2)
    lines = problem_lines(refused(text))
    assert len(lines) == 3
    by_path = {line.split(": ")[1]: line for line in lines}
    for path, needle in [("$.questions[0].pass_criteria.min_citation_rate", '"min_citation_rate": 1.5'),
                         ("$.questions[4].type", '"type": "coverage_gapp"'),
                         ("$.questions[9].sources[0].as_of", '"as_of": "31/05/2026"')]:
        number = int(by_path[path].split(":")[1])
        assert needle in line_at(text, number), (path, number)
    assert "coverage_gapp" in by_path["$.questions[4].type"] and "plan_diagnosis" in by_path["$.questions[4].type"]


def test_missing_field_is_reported_at_its_object():
    bad = copy.deepcopy(DEMO)
    del bad["questions"][2]["pass_criteria"]
    text = json.dumps(bad, indent=2)
    [line] = problem_lines(refused(text))
    assert line.startswith("cat.json:") and ": $.questions[2]: 'pass_criteria' is a required property" in line
    assert '"id": "EVAL-Q03"' in line_at(text, int(line.split(":")[1]) + 1)


def test_unknown_field_is_refused():
    bad = copy.deepcopy(DEMO)
    bad["questions"][0]["pass_criteria"]["min_citation"] = 0.9
    [line] = problem_lines(refused(bad))
    assert "$.questions[0].pass_criteria: Additional properties are not allowed ('min_citation' was unexpected)" in line


@pytest.mark.parametrize("field, value, expect", [
    ("id", "eval-q01", "does not match"),
    ("id", "EVAL-Q0000000000001", "is too long"),
    ("text", "   ", "does not match"),
    ("uses_stale_fixture", "yes", "is not of type 'boolean'"),
    ("sources", [], "should be non-empty"),
])
def test_question_field_refused(field, value, expect):
    bad = copy.deepcopy(DEMO)
    bad["questions"][7][field] = value
    lines = problem_lines(refused(bad))
    assert any(f"$.questions[7].{field}: " in line and expect in line for line in lines), lines


@pytest.mark.parametrize("criterion, value", [
    ("max_hallucinations", -1), ("max_hallucinations", 0.5), ("min_diagnosis_accuracy", 0.75),
    ("min_narrative_coherence", 6), ("max_lever_violations", -2),
])
def test_criterion_outside_its_scale_is_refused(criterion, value):
    bad = copy.deepcopy(DEMO)
    bad["questions"][12]["pass_criteria"][criterion] = value
    [line] = problem_lines(refused(bad))
    assert f"$.questions[12].pass_criteria.{criterion}: " in line


def test_duplicate_question_id_names_the_first_use():
    bad = copy.deepcopy(DEMO)
    bad["questions"][20]["id"] = "EVAL-Q03"
    [line] = problem_lines(refused(bad))
    assert line.endswith("$.questions[20].id: question id EVAL-Q03 already used by $.questions[2]")


def test_duplicate_source_id_in_one_question():
    bad = copy.deepcopy(DEMO)
    bad["questions"][1]["sources"][1]["id"] = bad["questions"][1]["sources"][0]["id"]
    [line] = problem_lines(refused(bad))
    assert "$.questions[1].sources[1].id: source id" in line and "used twice in this question" in line


def test_same_source_id_in_two_questions_is_fine():
    ok = copy.deepcopy(DEMO)
    ok["questions"][1]["sources"][0]["id"] = ok["questions"][0]["sources"][0]["id"]
    assert catalog.check_text(json.dumps(ok), FILE)["questions"][1]["sources"][0]["id"] == ok["questions"][0]["sources"][0]["id"]


def test_stale_flag_must_agree_with_the_sources():
    stale_index = next(i for i, q in enumerate(DEMO["questions"]) if q["uses_stale_fixture"])
    fresh_index = next(i for i, q in enumerate(DEMO["questions"]) if not q["uses_stale_fixture"])
    bad = copy.deepcopy(DEMO)
    bad["questions"][stale_index]["uses_stale_fixture"] = False
    bad["questions"][fresh_index]["uses_stale_fixture"] = True
    lines = problem_lines(refused(bad))
    assert len(lines) == 2
    assert any(f"$.questions[{stale_index}].uses_stale_fixture: false, but a source is marked" in l for l in lines)
    assert any(f"$.questions[{fresh_index}].uses_stale_fixture: a stale-fixture question needs a source" in l
               for l in lines)


def test_every_problem_is_listed_up_to_twenty():
    bad = copy.deepcopy(DEMO)
    for q in bad["questions"]:
        q["type"] = "unknown"
    error = refused(bad)
    assert len(error.problems) == 30
    lines = problem_lines(error)
    assert len(lines) == 21 and lines[-1] == "cat.json: ... and 10 more"
    assert str(error) == f"cat.json: catalog refused, nothing loaded (30 problems): {lines[0]}"
    assert "\n" not in str(error)
    assert error.summary() == "cat.json: catalog refused, nothing loaded (30 problems, listed above)"


@pytest.mark.parametrize("text, expect", [
    ("[]", "$: [] is not of type 'object'"),
    ('{"schema_version": 2, "version": "v1", "questions": []}', "$.questions: [] should be non-empty"),
    ('{"schema_version": 1, "version": "v 1", "questions": [{}]}', "$.version: 'v 1' does not match"),
])
def test_top_level_refusals(text, expect):
    assert any(expect in line for line in problem_lines(refused(text)))


def test_unreadable_file_is_one_line(tmp_path):
    with pytest.raises(EvalledgerError, match=r"nope.json: no such catalog file"):
        catalog.check_file(tmp_path / "nope.json")


def test_json_lines_maps_every_value_to_its_line():
    text = '{\n  "a": 1,\n  "b": [\n    {"c": "x, y"},\n    [2,\n     3]\n  ],\n  "d\\"e": {}\n}'
    assert catalog.json_lines(text) == {
        (): 1, ("a",): 2, ("b",): 3, ("b", 0): 4, ("b", 0, "c"): 4, ("b", 1): 5, ("b", 1, 0): 5, ("b", 1, 1): 6,
        ('d"e',): 8}
    assert catalog.json_path(("b", 1, 'd"e', "x_1")) == '$.b[1]["d\\"e"].x_1'
