-- The latest progress of this worker's running jobs, one row per attempt
-- (sk_task_progress_t, 126): written only while the attempt is the job's
-- current one (2 Processing, the same claim id), never over a newer attempt's
-- row. age_s: how long ago the handler reported it (at is the server's clock).
INSERT INTO sk_task_progress_t AS p
    (task_id, claim_id, progress_fraction, progress_message, progress_at_ts)
SELECT w.task_id, w.claim_id, w.fraction, w.message,
    now() - make_interval(secs => greatest(w.age_s, 0))
FROM unnest(%(task_ids)s::uuid[], %(claim_ids)s::bigint[], %(fractions)s::double precision[],
        %(messages)s::text[], %(ages)s::double precision[])
    AS w(task_id, claim_id, fraction, message, age_s)
JOIN sk_task_results_t r ON r.task_id = w.task_id AND r.sk_claim_id = w.claim_id
WHERE r.task_status = 2
ON CONFLICT (task_id) DO UPDATE SET claim_id = EXCLUDED.claim_id,
    progress_fraction = EXCLUDED.progress_fraction,
    progress_message = EXCLUDED.progress_message,
    progress_at_ts = EXCLUDED.progress_at_ts
WHERE p.claim_id <= EXCLUDED.claim_id
