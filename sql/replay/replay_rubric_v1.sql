-- The replay v1.0 rubric (issue 40): what a replay run is measured by and how it is decided, as
-- data. Each replayed query's measures are computed by the database (replay_query_admit_v1); rbo_p
-- weighs the top ranks of the chunk order (replay_rbo_v1); a run passes when its mean recall is at
-- least 0.9, no query's recall is below 0.5, the p95 latency is at most 1.25 times the captured
-- p95 and at most a tenth of the queries failed in the adapter; it is inconclusive with fewer than
-- three queries replayed in their captured mode, or fewer than half of those asked
-- (replay_decision_v1). A stricter policy is a new rubric version.
INSERT INTO rubric (suite, version, definition) VALUES ('replay', 'v1.0', $rubric$
{
  "suite": "replay",
  "version": "v1.0",
  "dimensions": [
    {"key": "recall", "scored_by": "automatic", "aggregate": "mean and minimum over replayed queries",
     "question": "Of the slugs production retrieved, the share the replay retrieved among as many results."},
    {"key": "jaccard", "scored_by": "automatic", "aggregate": "mean over replayed queries",
     "question": "The overlap of the two slug sets."},
    {"key": "rbo", "scored_by": "automatic", "aggregate": "mean over replayed queries",
     "question": "Rank-biased overlap of the two chunk orders."},
    {"key": "latency_ratio", "scored_by": "automatic", "aggregate": "p95 over replayed queries",
     "question": "The replay's latency over the captured latency."}
  ],
  "rbo_p": 0.9,
  "min_replayable": 3,
  "min_replayable_share": 0.5,
  "pass_rule": {
    "mean_recall_at_least": 0.9,
    "every_recall_at_least": 0.5,
    "p95_latency_ratio_at_most": 1.25,
    "adapter_failed_share_at_most": 0.1
  }
}
$rubric$);

INSERT INTO rubric_activation (suite, rubric_id, reason)
SELECT r.suite, r.rubric_id, 'replay: the first rubric of the suite (issue 40)'
  FROM rubric r WHERE (r.suite, r.version) = ('replay', 'v1.0');
