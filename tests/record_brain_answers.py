"""Regenerate runner/evalledger/suites/brain_eval/fixtures/recorded_brain_answers.json, the demo
brain's answers to the demo catalog, after the catalog changes:
    .venv/bin/python -m tests.record_brain_answers

Each answer is derived from its question's expected findings and sources; three are deliberately
imperfect so that the automatic scores have something to find. Then regenerate the judges'
drafts (python -m tests.record_brain_eval_judges), which read these answers.
"""
import json
import math
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "runner/evalledger/suites/brain_eval/fixtures"
cat = json.loads((FIXTURES / "catalog_v28-2026Q2.json").read_text("utf-8"))
LEVERS = {"coverage_gap": "add_pipeline_generation", "play_retrospective": "rep_coaching",
          "churn_diagnosis": "save_play", "expansion_qualification": "expansion_offer"}
out = {}
for q in cat["questions"]:
    s = q["sources"]
    findings = q["pass_criteria"].get("expected_findings", [])
    narrative = " ".join(findings) + "."
    if q["uses_stale_fixture"]:
        stale = [x for x in s if x.get("stale")][0]
        narrative += f" Note: {stale['id']} is as of {stale['as_of']}, so it is stale and treated as indicative only."
    claims = [
        {"text": f"{s[0]['title']}: {json.dumps(s[0]['data'][0])}", "numerical": True, "source_ids": [s[0]["id"]], "confidence": "high"},
        {"text": findings[0] if findings else q["text"], "numerical": True, "source_ids": [x["id"] for x in s[:2]], "confidence": "multi_source"},
        {"text": "The trend is likely to continue next quarter without intervention.", "numerical": False, "source_ids": [], "confidence": "inference"},
    ]
    if q["id"] == "EVAL-Q07":
        claims[0]["source_ids"] = ["crm_export_2025"]
    actions = []
    if q["type"] in LEVERS:
        actions.append({"action_type": LEVERS[q["type"]], "description": "The lever that addresses the main driver."})
    if q["id"] == "EVAL-Q18":
        actions.append({"action_type": "discount_50pct", "description": "Offer half price at renewal."})
    doc = {"narrative": narrative, "claims": claims, "proposed_actions": actions}
    text = json.dumps(doc)
    if q["id"] == "EVAL-Q24":
        text = "I could not find enough in the sources to answer this one confidently; the seat data looks fine."
    out[q["id"]] = {"text": text, "input_tokens": 400 + len(json.dumps(s)) // 4, "output_tokens": max(1, math.ceil(len(text) / 4))}
doc = {"catalog_version": cat["version"], "about": "Recorded answers of the demo brain to the demo catalog v28-2026Q2, used when the brain's model has no API key (labelled as recorded). Three are deliberately imperfect: EVAL-Q07 cites a source it was not given, EVAL-Q18 proposes an action outside the demo levers, EVAL-Q24 breaks the answer contract.",
       "models": {"anthropic:claude-sonnet-4-6": out}}
(FIXTURES / "recorded_brain_answers.json").write_text(json.dumps(doc, indent=1) + "\n")
print(f"wrote {len(out)} recorded answers for catalog {cat['version']}")
