-- Cancel jobs by id, re-checking in this statement that each still matches.
-- Waiting ones: the queue row goes, the result row becomes 7 Cancelled
-- (created if a hand-posted job had none); queue rows are locked with SKIP
-- LOCKED, so a job a worker is claiming right now is left alone. Running ones
-- (when 2 is among the statuses), fenced by their claim token: a worker that
-- is alive gets the request (sk_cancel_requested_at_ts) and a notification on
-- its own channel, and stops the handler; the job becomes 7 when that attempt
-- ends (finish_failure.sql, hand_back.sql). One whose worker is gone (hung, as
-- sk_inflight_tasks() judges it: it can no longer run) becomes 7 here, unless
-- a keyed re-post arrived while it ran: that takes precedence, as it does over
-- every other ending of the attempt, and the newest payload runs afresh.
-- A fan-in job waiting for others (after=: 1 Unprocessed, no queue row) is
-- cancelled like a waiting one, its edges deleted. Every job this statement
-- ends 7 Cancelled cancels the jobs that wait for it in turn (sk_release_after:
-- or runs them, with after_failure="run").
-- Returns each job changed with how (waiting, running: asked, gone, or rerun:
-- posted again for its re-post) and, for a running one, the claim it concerns.
-- Waiting jobs are re-checked against the selection as the preview listed them
-- (sk_waiting_selection, 140_skconsole_selection.sql; the --where terms were the
-- preview's), as ops_bump.sql does.
WITH lq AS (
    SELECT q.task_id FROM sk_tasks_queue_t q
    JOIN sk_waiting_selection(%(statuses)s::integer[], %(ids)s::uuid[], %(task_type)s::text,
        %(signature)s::text, NULL, NULL, NULL, %(cutoff)s::timestamptz) AS s ON s.task_id = q.task_id
    WHERE q.task_id = ANY(%(ids)s::uuid[])
    FOR UPDATE OF q SKIP LOCKED
),
removed AS (
    DELETE FROM sk_tasks_queue_t q USING lq
    WHERE q.task_id = lq.task_id
    RETURNING q.task_id, q.task_type, q.task_source, q.task_payload, q.task_priority, q.task_posted_at_ts
),
cancelled AS (
    INSERT INTO sk_task_results_t AS r (task_id, task_type, task_source, task_payload, task_status,
        task_priority, task_error_count, task_last_error_is_recoverable,
        task_processing_time_milliseconds, task_posted_at_ts, task_processing_finalized_at_ts)
    SELECT task_id, task_type, task_source, task_payload, 7, task_priority, 0, false, 0,
        task_posted_at_ts, now()
    FROM removed
    ON CONFLICT (task_id) DO UPDATE SET
        task_status = 7,
        task_processing_finalized_at_ts = now(),
        sk_rerun_requested = false
    RETURNING r.task_id
),
-- a fan-in job waiting for its parents: no queue row to delete
waited AS (
    UPDATE sk_task_results_t r SET
        task_status = 7,
        task_processing_finalized_at_ts = now(),
        task_last_error = sk_task_error('skconsole.JobCancelled',
            'cancelled by an operator while it waited for other jobs (after=)')
    WHERE r.task_id IN (
            SELECT w.task_id FROM sk_task_results_t w
            JOIN sk_waiting_selection(%(statuses)s::integer[], %(ids)s::uuid[], %(task_type)s::text,
                %(signature)s::text, NULL, NULL, NULL, %(cutoff)s::timestamptz) AS s
                ON s.task_id = w.task_id
            WHERE w.task_id = ANY(%(ids)s::uuid[]) AND w.task_status = 1
                AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = w.task_id)
            FOR UPDATE OF w SKIP LOCKED)
    RETURNING r.task_id
),
unlinked AS (
    DELETE FROM sk_task_after_t e USING waited WHERE e.task_id = waited.task_id
    RETURNING e.task_id
),
-- MATERIALIZED: the verdict is computed once, not again for each row updated
running AS MATERIALIZED (
    SELECT i.task_id, i.claim_id, i.hung_reason, i.worker_id
    FROM sk_inflight_tasks(%(unowned_s)s) i
    JOIN sk_task_results_t r ON r.task_id = i.task_id
    WHERE 2 = ANY(%(statuses)s::integer[]) AND i.task_id = ANY(%(ids)s::uuid[])
        AND (i.worker_id IS NOT NULL OR i.hung_reason IS NOT NULL)
        AND (%(task_type)s::text IS NULL OR i.task_type = %(task_type)s::text)
        AND (%(signature)s::text IS NULL OR r.sk_error_signature = %(signature)s::text)
        AND (%(cutoff)s::timestamptz IS NULL OR i.attempt_started_at < %(cutoff)s::timestamptz)
),
gone AS (
    UPDATE sk_task_results_t r SET
        task_status = CASE WHEN r.sk_rerun_requested THEN 1 ELSE 7 END,
        task_error_count = CASE WHEN r.sk_rerun_requested THEN 0 ELSE r.task_error_count END,
        task_last_error = CASE WHEN r.sk_rerun_requested
            THEN sk_task_error('skconsole.HungJob', x.hung_reason)
            ELSE sk_task_error('skconsole.JobCancelled',
                'cancelled by an operator while it ran; its worker was gone: ' || x.hung_reason)
            END,
        task_processing_finalized_at_ts = CASE WHEN r.sk_rerun_requested THEN NULL ELSE now() END,
        sk_cancel_requested_at_ts = CASE WHEN r.sk_rerun_requested THEN NULL ELSE now() END,
        -- a keyed re-post that arrived while it ran: the re-run takes its payload
        -- and priority (sk_rerun_value, 110_skconsole_shared.sql)
        task_payload = sk_rerun_value(r.sk_rerun_requested, r.sk_rerun_payload, r.task_payload),
        task_priority = sk_rerun_value(r.sk_rerun_requested, r.sk_rerun_priority, r.task_priority),
        sk_rerun_payload = NULL,
        sk_rerun_priority = NULL,
        sk_rerun_requested = false
    FROM running x
    -- "+ 0": each job looked up by its key (see reap.sql)
    WHERE x.hung_reason IS NOT NULL AND r.task_id = x.task_id AND r.task_status + 0 = 2
        AND r.sk_claim_id IS NOT DISTINCT FROM x.claim_id
    RETURNING r.task_id, r.task_status, r.task_type, r.task_source, r.task_payload,
        r.task_priority, r.sk_attempt, x.claim_id, r.task_last_error, x.worker_id,
        r.task_last_processing_attempted_at_ts AS started_at
),
-- the attempts of a gone worker that this cancel ended, kept in sk_attempts_t as a
-- reap keeps them (sk_record_attempts, 138_skconsole_attempt_record.sql): outcome
-- reaped (its worker was gone), its status 7 (or 1 for the re-post that runs)
attempted AS MATERIALIZED (
    SELECT sk_record_attempts(array_agg(task_id), array_agg(sk_attempt), array_agg(claim_id),
        array_agg(started_at), array_agg(worker_id), array_agg('reaped'::text),
        array_agg(task_status), array_agg(task_last_error)) AS n
    FROM gone
),
-- the newest payload of a keyed re-post, ready now (sk_enqueue,
-- 142_skconsole_shared_writes.sql)
reposted AS (
    SELECT sk_enqueue(array_agg(g.task_id), array_agg(g.task_type), array_agg(g.task_source),
        array_agg(g.task_payload), array_agg(g.task_priority), array_agg(now())) AS n
    FROM gone g
    WHERE g.task_status = 1
),
woken AS (
    SELECT count(pg_notify('sk_task_queue_item_added', '')) AS n
    FROM reposted WHERE reposted.n > 0
),
asked AS (
    UPDATE sk_task_results_t r SET
        sk_cancel_requested_at_ts = coalesce(r.sk_cancel_requested_at_ts, now())
    FROM running x
    WHERE x.hung_reason IS NULL AND r.task_id = x.task_id AND r.task_status + 0 = 2
        AND r.sk_claim_id IS NOT DISTINCT FROM x.claim_id
    RETURNING r.task_id, r.sk_owner_worker_id, r.sk_claim_id
),
told AS (
    SELECT count(pg_notify(sk_worker_channel(w.worker), '')) AS n
    FROM (SELECT DISTINCT sk_owner_worker_id AS worker FROM asked) AS w
),
-- the jobs waiting (after=) for one cancelled here; called only when one has waiters
ended AS MATERIALIZED (
    SELECT ARRAY(
        SELECT task_id FROM cancelled UNION ALL SELECT task_id FROM waited
        UNION ALL SELECT task_id FROM gone WHERE task_status = 7) AS ids
),
released AS MATERIALIZED (
    SELECT CASE WHEN EXISTS (SELECT 1 FROM sk_task_after_t e WHERE e.after_id = ANY(x.ids))
        THEN sk_release_after(x.ids, false) END AS n
    FROM ended x
)
SELECT task_id, 'waiting' AS how, NULL::bigint AS claim_id FROM cancelled
UNION ALL
SELECT task_id, 'waiting', NULL FROM waited
UNION ALL
SELECT task_id, CASE WHEN task_status = 1 THEN 'rerun' ELSE 'gone' END, NULL
FROM gone CROSS JOIN woken CROSS JOIN attempted
UNION ALL
SELECT asked.task_id, 'running', asked.sk_claim_id FROM asked CROSS JOIN told
UNION ALL
-- never a row (a count is never negative): read so that released always runs
SELECT NULL, 'released', NULL FROM released WHERE released.n < 0
