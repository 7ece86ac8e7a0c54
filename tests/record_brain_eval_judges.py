"""Regenerate runner/evalledger/suites/brain_eval/fixtures/recorded_judges.json after the judge
templates, the demo catalog or the demo brain's recorded answers change:
    .venv/bin/python -m tests.record_brain_eval_judges

Each judge's draft is derived from the recorded answer the way a careful judge would read it
(claims counted, claims citing a source the brain was not given quoted as unsupported, staleness
recognised when the narrative says the stale source is stale); the judges disagree on purpose on
diagnosis accuracy (one of them is harsher), so the reviewer sees the disagreement.
"""
import json
import math
from pathlib import Path

from evalledger.judges.panel import prompt_sha256
from evalledger.suites.brain_eval import catalog, harness

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "runner/evalledger/suites/brain_eval/fixtures/recorded_judges.json"
HARSH = "google:gemini-1.5-pro"

questions = json.loads(catalog.demo_catalog_path().read_text("utf-8"))["questions"]
answers = harness.recorded_answers()["anthropic:claude-sonnet-4-6"]
models = {spec: {"by_prompt_sha256": {}, "default": None} for spec in harness.DEFAULT_JUDGES.split(",")}
for q in questions:
    doc = harness.repair_json(answers[q["id"]]["text"])
    if doc is None:
        continue  # an answer that breaks the contract is not judged
    question = {"question_id": q["id"], "question_type": q["type"], "question_text": q["text"], "sources": q["sources"],
                "uses_stale_fixture": q["uses_stale_fixture"], "pass_criteria": q["pass_criteria"]}
    system, user = harness.render_judge(question, doc)
    given = {s["id"] for s in q["sources"]}
    unsupported = [c["text"] for c in doc["claims"] if c["numerical"] and not set(c["source_ids"]) <= given]
    stale = "stale" in doc["narrative"].lower() if q["uses_stale_fixture"] else None
    for spec, entry in models.items():
        diagnosis = None
        if "min_diagnosis_accuracy" in q["pass_criteria"]:
            diagnosis = 0.5 if spec == HARSH and q["type"] in ("plan_diagnosis", "forecast_bias") else 1
        reply = {"total_claims": len(doc["claims"]), "unsupported_claims": unsupported,
                 "diagnosis_accuracy": diagnosis, "staleness_recognised": stale,
                 "notes": ("A claim cites a source the brain was not given. " if unsupported else "")
                          + "The narrative follows the sources." }
        text = json.dumps(reply)
        entry["by_prompt_sha256"][prompt_sha256(system, user)] = {
            "text": text, "input_tokens": math.ceil((len(system) + len(user)) / 4) + 7,
            "output_tokens": math.ceil(len(text) / 4)}
        entry["default"] = entry["default"] or {
            "text": json.dumps({"total_claims": 0, "unsupported_claims": [], "diagnosis_accuracy": None,
                                "staleness_recognised": None, "notes": "No recorded draft for this answer."}),
            "input_tokens": 0, "output_tokens": 0}
OUT.write_text(json.dumps({"about": "Recorded judge drafts on the demo brain's recorded answers "
                                    "(python -m tests.record_brain_eval_judges).", "models": models}, indent=1) + "\n")
print(f"wrote {OUT.relative_to(REPO)}: {sum(len(m['by_prompt_sha256']) for m in models.values())} drafts")
