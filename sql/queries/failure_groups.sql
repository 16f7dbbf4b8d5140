-- Failed jobs (4 Error, 5 Faulted, 6 Fatal) grouped by error signature, the
-- biggest groups first, each with one sample: its final exception line. The
-- inner aggregate streams along the partial index idx_sk_task_results_failures
-- (signature, status, type); the sample is one index probe per group.
WITH per AS (
    SELECT r.sk_error_signature AS signature, r.task_status AS status, r.task_type::text AS task_type,
        count(*) AS n,
        min(sk_last_run_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts)) AS first_seen,
        max(sk_last_run_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts)) AS last_seen
    FROM sk_task_results_t r
    WHERE r.task_status IN (4, 5, 6)
    GROUP BY r.sk_error_signature, r.task_status, r.task_type
),
g AS (
    SELECT signature, sum(n)::bigint AS jobs,
        coalesce(sum(n) FILTER (WHERE status = 4), 0)::bigint AS error,
        coalesce(sum(n) FILTER (WHERE status = 5), 0)::bigint AS faulted,
        coalesce(sum(n) FILTER (WHERE status = 6), 0)::bigint AS fatal,
        array_agg(DISTINCT task_type) AS types,
        min(first_seen) AS first_seen, max(last_seen) AS last_seen
    FROM per
    GROUP BY signature
    ORDER BY jobs DESC, signature
    LIMIT %(limit)s
)
SELECT sk_signature_key(g.signature) AS signature, g.jobs AS count, g.error, g.faulted,
    g.fatal, g.types AS task_types, g.first_seen, g.last_seen, s.task_id AS sample_task_id,
    sk_error_final_line(s.task_last_error) AS sample_error
FROM g
LEFT JOIN LATERAL (
    (SELECT r.task_id, r.task_last_error FROM sk_task_results_t r
     WHERE r.task_status IN (4, 5, 6) AND r.sk_error_signature = g.signature LIMIT 1)
    UNION ALL
    (SELECT r.task_id, r.task_last_error FROM sk_task_results_t r
     WHERE g.signature IS NULL AND r.task_status IN (4, 5, 6) AND r.sk_error_signature IS NULL LIMIT 1)
    LIMIT 1
) s ON true
ORDER BY g.jobs DESC, g.signature
