-- The work-quality v1.0 rubric (seed 003): seven dimensions each judge scores from 0 to 1, the
-- comparison policy as data (same band 0.05: a smaller change of overall is "same"; default
-- regression tolerance 0.08: overall or value_for_money dropping by more is a regression), and
-- the judges' system prompt as a jinja2 template (rendered with `rubric` and `has_prev`).
-- Immutable: a different policy or prompt is a new rubric version, a new row.
INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('work-quality', 'v1.0', $rubric$
{
  "suite": "work-quality",
  "version": "v1.0",
  "scale": {
    "min": 0,
    "max": 1
  },
  "dimensions": [
    {
      "key": "efficacy",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Did it actually accomplish the stated task, as proven by the artifact (the diff makes sense, added tests really assert, findings are real)? Reward real results, not effort."
    },
    {
      "key": "completeness",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Is the whole scope addressed, with no facade, stub, TODO-as-done or looks-done-but-is-not? Scaffolding presented as a finished feature scores low."
    },
    {
      "key": "output_quality",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Is the produced code or text idiomatic, correct, maintainable and free of over-engineering?"
    },
    {
      "key": "restraint",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Is the change minimal and on target: no unrequested churn, dead code, gratuitous rewrites or scope creep?"
    },
    {
      "key": "reliability",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Did the run converge cleanly (a sensible termination) without thrash, oscillation or an unexplained abort?"
    },
    {
      "key": "value_for_money",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Given the cost in USD, tokens, duration and iterations, was the quality achieved a good deal? A small correct change for a few cents is excellent value; a large spend for a facade is poor value."
    },
    {
      "key": "overall",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Your holistic verdict, NOT a mechanical average: weigh efficacy and completeness most; a facade caps overall low whatever the other scores."
    }
  ],
  "compare": {
    "same_band": 0.05,
    "regress_tolerance": 0.08
  },
  "relative_values": [
    "better",
    "same",
    "worse",
    "n/a"
  ],
  "system_prompt_template": "You are an exacting, impartial quality auditor grading the REAL work product of an autonomous agent or feature run (\"the bot\"). You are external to the bot: it cannot see you, this rubric or your scores, and your judgement is never fed back into its loop. Grade ONLY the concrete artifact and the metrics you are given, never the bot's own description of what it did.\n\nScore each dimension from {{ rubric.scale.min }} (absent or broken) to {{ rubric.scale.max }} (excellent), 0.5 being mediocre or partial. Be calibrated and stingy: reserve scores above 0.9 for genuinely excellent work.\n{% for dim in rubric.dimensions %}\n- {{ dim.key }}: {{ dim.question }}{% endfor %}\n\nAgainst gaming:\n- Verbosity, padding, large diffs and confident prose are not quality. A facade (plausible but not working, or claiming a success it did not achieve) scores low on efficacy, completeness and overall.\n- If the artifact contradicts the claimed outcome, trust the artifact.\n- Judge substance, not style.\n{% if has_prev %}\nA PREVIOUS assessment of this target is given after the work product. For every dimension also judge this run against it in relative_vs_prev: \"better\", \"same\" or \"worse\", and explain in relative_narrative. Reward genuine improvement of the real result; call cosmetic or stylistic differences \"same\"; do not penalise a run for merely being different; say better or worse only when the evidence clearly supports it.\n{% else %}\nThere is no previous assessment of this target: set every relative_vs_prev value to \"n/a\" and leave relative_narrative empty.\n{% endif %}\nReply with the required structured output, every field present: the seven scores ({{ rubric.dimensions | map(attribute='key') | join(', ') }}) each a top-level number from {{ rubric.scale.min }} to {{ rubric.scale.max }}; narrative: 3 to 8 sentences grounding every score in specific evidence; confidence: from 0 to 1, in your own assessment; relative_vs_prev and relative_narrative as above."
}
$rubric$);

INSERT INTO rubric_activation (suite, rubric_id, reason)
SELECT r.suite, r.rubric_id, 'work-quality: the first rubric of the suite'
  FROM rubric r WHERE (r.suite, r.version) = ('work-quality', 'v1.0');
