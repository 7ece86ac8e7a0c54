"""Regenerate runner/evalledger/suites/takes_quality/fixtures/recorded_judges.json after the prompt templates, the rubric
row or the demo corpus change:  .venv/bin/python -m tests.record_judges

The replies are fixed (written by hand to read like real judges); only the prompt key is recomputed.
"""
import json
import re
from pathlib import Path

from evalledger.suites.takes_quality import corpus as takes, prompts
from evalledger.judges.panel import prompt_sha256
from evalledger.core.rubric import Rubric

REPO = Path(__file__).resolve().parents[1]

mig = "".join(p.read_text() for p in sorted((REPO / "migrations").glob("*.sql")))
definition = json.loads(re.search(r"'takes-quality', '[^']+', \$rubric\$(.*?)\$rubric\$", mig, re.S).group(1))
rubric = Rubric(0, "v1.0", "", definition)
all_takes = takes.read_file((REPO / "runner/evalledger/suites/takes_quality/fixtures/takes_demo.jsonl"))
sample = takes.sample_takes(all_takes, seed=2026, limit=100, slug_prefix="demo/")
system, user = prompts.render(rubric, sample, "demo/")
key = prompt_sha256(system, user)
in_tok = (len(system) + len(user)) // 4 + 7

replies = {
  "openai:gpt-4o": ({"accuracy": 8, "attribution": 7, "weight_calibration": 7, "kind_classification": 8, "signal_density": 7},
     "Claims are stated precisely and mostly traceable to their sources. Several takes cite informal sources (dinner conversation, Slack) that make attribution hard to verify.",
     ["Record a link or document id for informal sources such as Slack threads and meetings.", "Split compound claims (founding year and headquarters) into separate facts."], "plain"),
  "anthropic:claude-opus-4-7": ({"accuracy": 8, "attribution": 8, "weight_calibration": 7, "kind_classification": 7, "signal_density": 8},
     "Holders and kinds are clear and the bets are falsifiable. Some weights look high for opinions backed by a single meeting.",
     ["Lower the weight of takes supported by a single conversation, or note the evidence behind a high weight.", "Give every bet a resolution date."], "plain"),
  "google:gemini-1.5-pro": ({"accuracy": 7, "attribution": 8, "weight_calibration": 7, "kind_classification": 8, "signal_density": 6},
     "A useful, specific sample. A few takes restate the same idea about market consolidation, which lowers signal density.",
     ["Merge near-duplicate takes about the same market into one with the strongest source.", "Give every bet a resolution date."], "fenced"),
}
models = {}
for spec, (scores, feedback, improvements, style) in replies.items():
    payload = {"scores": scores, "feedback": feedback, "improvements": improvements}
    text = json.dumps(payload)
    if style == "fenced":
        text = "Here is my verdict:\n```json\n" + json.dumps(payload, indent=2) + "\n```"
    entry = {"text": text, "input_tokens": in_tok, "output_tokens": len(text) // 4 + 1}
    models[spec] = {"by_prompt_sha256": {key: entry}, "default": entry}
doc = {
  "schema_version": 1,
  "note": ("Judge replies recorded for the shipped demo corpus (fixtures/takes_demo.jsonl, seed 2026, slug prefix "
           "'demo/'), keyed by model and by the SHA-256 of the rendered prompt (system, NUL, user). A prompt "
           "without its own entry gets the model's default reply. Used when a panel model's provider has no API "
           "key; every run and receipt that uses them says so."),
  "models": models,
}
(REPO / "runner/evalledger/suites/takes_quality/fixtures/recorded_judges.json").write_text(json.dumps(doc, indent=2) + "\n")
print(key)
