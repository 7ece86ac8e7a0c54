-- replay_lost_most_rows_v1: the replayed queries of completed replay runs, each ranked within its
-- run by what it lost (lowest recall first, then Jaccard, then rank-biased overlap, then capture
-- id), with the sources it lost and gained. Filters, each NULL for all: a run, the p_worst
-- lowest-ranked queries of each run. Readers see what their policies show.
CREATE FUNCTION evalledger.replay_lost_most_rows_v1(p_replay_run_id bigint, p_worst integer)
RETURNS TABLE (
    replay_run_id  bigint,
    brain_version  text,
    completed_at   timestamptz,
    rank_in_run    bigint,
    capture_id     bigint,
    tool_name      text,
    recall         numeric,
    jaccard        numeric,
    rbo            numeric,
    sources_lost   text[],
    sources_gained text[],
    latency_ratio  numeric)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT x.replay_run_id, x.brain_version, x.completed_at, x.rank_in_run, x.capture_id, x.tool_name, x.recall,
           x.jaccard, x.rbo, x.sources_lost, x.sources_gained, x.latency_ratio
      FROM (SELECT r.replay_run_id, r.brain_version, r.completed_at,
                   row_number() OVER (PARTITION BY r.replay_run_id
                                      ORDER BY q.recall, q.jaccard, q.rbo, q.capture_id) AS rank_in_run,
                   q.capture_id, q.tool_name, q.recall, q.jaccard, q.rbo, q.sources_lost, q.sources_gained,
                   q.latency_ratio
              FROM evalledger.replay_run r
              JOIN evalledger.replay_query q ON q.replay_run_id = r.replay_run_id
             WHERE r.completed_at IS NOT NULL AND q.status = 'replayed'
               AND (p_replay_run_id IS NULL OR r.replay_run_id = p_replay_run_id)) x
     WHERE p_worst IS NULL OR x.rank_in_run <= p_worst
     ORDER BY x.replay_run_id DESC, x.rank_in_run
$$;
GRANT EXECUTE ON FUNCTION replay_lost_most_rows_v1(bigint, integer) TO evalledger_revops, evalledger_auditor;
