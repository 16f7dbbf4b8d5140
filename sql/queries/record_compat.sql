-- record.sql's twin for a database with Stakhanovise.NET's tables alone (read
-- degraded): what its job rows still say, with the same columns. A row keeps
-- only its job's latest attempt, and a purge deletes it with its past: posted
-- (by the post's time), started (the latest attempt's start), succeeded,
-- failed by kind and cancelled (by when each ended). No signature rows, no
-- reaps, no latency histograms: those need skconsole's record.
WITH events AS (
    SELECT r.task_type, r.task_posted_at_ts AS at, 'posted' AS kind
    FROM sk_task_results_t r
    WHERE r.task_posted_at_ts >= %(since)s AND r.task_posted_at_ts < %(until)s
    UNION ALL
    SELECT r.task_type, r.task_last_processing_attempted_at_ts, 'started'
    FROM sk_task_results_t r
    WHERE r.task_last_processing_attempted_at_ts >= %(since)s
        AND r.task_last_processing_attempted_at_ts < %(until)s
    UNION ALL
    SELECT r.task_type, coalesce(r.task_processing_finalized_at_ts,
            r.task_last_processing_attempted_at_ts), r.task_status::text
    FROM sk_task_results_t r
    WHERE r.task_status IN (3, 4, 5, 6, 7)
        AND coalesce(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts)
            >= %(since)s
        AND coalesce(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts)
            < %(until)s
)
SELECT %(since)s::timestamptz + floor(extract(epoch FROM e.at - %(since)s::timestamptz)
        / %(step_s)s) * %(step_s)s * interval '1 second' AS at,
    CASE WHEN %(combined)s THEN '' ELSE e.task_type END AS task_type, ''::text AS signature,
    count(*) FILTER (WHERE e.kind = 'posted') AS posted,
    count(*) FILTER (WHERE e.kind = 'started') AS started,
    count(*) FILTER (WHERE e.kind = '3') AS succeeded,
    count(*) FILTER (WHERE e.kind = '4') AS failed_recoverable,
    count(*) FILTER (WHERE e.kind = '5') AS failed_faulted,
    count(*) FILTER (WHERE e.kind = '6') AS failed_fatal,
    count(*) FILTER (WHERE e.kind = '7') AS cancelled,
    0::bigint AS reaped,
    NULL::integer[] AS wait_hist, NULL::double precision AS wait_max_ms,
    NULL::integer[] AS run_hist, NULL::double precision AS run_max_ms,
    NULL::timestamptz AS starts_at, NULL::timestamptz AS unrolled_since
FROM events e
WHERE %(types)s::text[] IS NULL OR e.task_type = ANY(%(types)s::text[])
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3
