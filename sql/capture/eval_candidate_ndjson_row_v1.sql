-- eval_candidate_ndjson_row_v1: the seed-001 NDJSON row (schema version 1), field by field, in order.
CREATE TYPE evalledger.eval_candidate_ndjson_row_v1 AS (
    schema_version      integer,
    id                  bigint,
    tool_name           text,
    query               text,
    retrieved_slugs     text[],
    retrieved_chunk_ids bigint[],
    source_ids          text[],
    expand_enabled      boolean,
    detail              text,
    detail_resolved     text,
    vector_enabled      boolean,
    expansion_applied   boolean,
    latency_ms          double precision,
    remote              boolean,
    job_id              bigint,
    subagent_id         bigint,
    created_at          text
);
