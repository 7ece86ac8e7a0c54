-- name: open_batches
-- A run's batches with a request whose outcome is not read yet, each with its provider id (NULL: never submitted), newest status and when it was written.
SELECT b.batch_id, b.provider, b.attempt, b.created_at,
       (SELECT e.provider_batch_id FROM evalledger.judge_batch_event e
         WHERE e.batch_id = b.batch_id AND e.status = 'submitted') AS provider_batch_id,
       (SELECT e.status FROM evalledger.judge_batch_event e
         WHERE e.batch_id = b.batch_id ORDER BY e.event_id DESC LIMIT 1) AS status
  FROM evalledger.judge_batch b
 WHERE b.suite = %(suite)s AND b.run_key = %(run_key)s
   AND EXISTS (SELECT 1 FROM evalledger.judge_batch_request q
                WHERE q.batch_id = b.batch_id
                  AND NOT EXISTS (SELECT 1 FROM evalledger.judge_batch_result r
                                   WHERE (r.batch_id, r.custom_id) = (q.batch_id, q.custom_id)))
 ORDER BY b.batch_id;

-- name: batch_requests
-- A batch's requests whose outcome is not read yet: custom_id, the item it asks for and the model.
SELECT q.custom_id, q.item, q.model
  FROM evalledger.judge_batch_request q
 WHERE q.batch_id = %(batch_id)s
   AND NOT EXISTS (SELECT 1 FROM evalledger.judge_batch_result r
                    WHERE (r.batch_id, r.custom_id) = (q.batch_id, q.custom_id))
 ORDER BY q.custom_id;

-- name: insert_batch
-- A batch about to be submitted (its requests follow); the database numbers it.
INSERT INTO evalledger.judge_batch (suite, run_key, provider, attempt)
VALUES (%(suite)s, %(run_key)s, %(provider)s, %(attempt)s)
RETURNING batch_id;

-- name: insert_request
-- One request of a batch about to be submitted.
INSERT INTO evalledger.judge_batch_request (batch_id, custom_id, item, model)
VALUES (%(batch_id)s, %(custom_id)s, %(item)s, %(model)s);

-- name: insert_event
-- What the provider said of a batch (submitted with its id, or a new status), or a cancel asked for.
INSERT INTO evalledger.judge_batch_event (batch_id, status, provider_batch_id, detail)
VALUES (%(batch_id)s, %(status)s, %(provider_batch_id)s, %(detail)s);

-- name: insert_result
-- One request's outcome, read from the batch's results (in the transaction that stores the suite's row for it).
INSERT INTO evalledger.judge_batch_result (batch_id, custom_id, outcome, error)
VALUES (%(batch_id)s, %(custom_id)s, %(outcome)s, %(error)s);

-- name: list_batches
-- Judge batches, newest first: the run they judge, the provider and its id, the newest status, requests and outcomes read.
SELECT b.batch_id, b.suite, b.run_key AS run, b.provider, b.attempt,
       (SELECT e.provider_batch_id FROM evalledger.judge_batch_event e
         WHERE e.batch_id = b.batch_id AND e.status = 'submitted') AS provider_batch_id,
       coalesce((SELECT e.status FROM evalledger.judge_batch_event e
                  WHERE e.batch_id = b.batch_id ORDER BY e.event_id DESC LIMIT 1), 'not submitted') AS status,
       (SELECT count(*) FROM evalledger.judge_batch_request q WHERE q.batch_id = b.batch_id) AS requests,
       (SELECT count(*) FROM evalledger.judge_batch_result r WHERE r.batch_id = b.batch_id AND r.outcome = 'succeeded')
           AS succeeded,
       (SELECT count(*) FROM evalledger.judge_batch_result r WHERE r.batch_id = b.batch_id AND r.outcome <> 'succeeded')
           AS failed,
       b.created_at
  FROM evalledger.judge_batch b
 WHERE (%(batch_id)s::bigint IS NULL OR b.batch_id = %(batch_id)s)
   AND (%(open)s::boolean IS NOT TRUE OR EXISTS (
           SELECT 1 FROM evalledger.judge_batch_request q WHERE q.batch_id = b.batch_id
              AND NOT EXISTS (SELECT 1 FROM evalledger.judge_batch_result r
                               WHERE (r.batch_id, r.custom_id) = (q.batch_id, q.custom_id))))
 ORDER BY b.batch_id DESC
 LIMIT %(limit)s;

-- name: batch_events
-- A batch's events in order: what the provider said of it, when.
SELECT e.status, e.provider_batch_id, e.detail, e.created_at
  FROM evalledger.judge_batch_event e WHERE e.batch_id = %(batch_id)s ORDER BY e.event_id;

-- name: batch_outcomes
-- A batch's requests with their outcome (NULL: not read yet).
SELECT q.custom_id, q.item, q.model, r.outcome, r.error
  FROM evalledger.judge_batch_request q
  LEFT JOIN evalledger.judge_batch_result r ON (r.batch_id, r.custom_id) = (q.batch_id, q.custom_id)
 WHERE q.batch_id = %(batch_id)s ORDER BY q.custom_id;

-- name: known_provider_batches
-- The provider ids the ledger has recorded for a provider's batches written since a moment: batches that are not some other ledger batch's lost submission.
SELECT e.provider_batch_id
  FROM evalledger.judge_batch_event e JOIN evalledger.judge_batch b USING (batch_id)
 WHERE b.provider = %(provider)s AND e.status = 'submitted' AND b.created_at >= %(since)s;
