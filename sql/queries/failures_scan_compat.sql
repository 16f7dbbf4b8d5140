-- The newest failed jobs (4, 5, 6) with their full last error, on a database
-- without skconsole's stored signatures (read degraded): the signatures are
-- computed by the reader (skconsole.core.signature) over at most %(cap)s rows; the
-- total says how many there are in all, so a reader can say what it left out.
-- failed_at spells out sk_last_run_at() (110_skconsole_shared.sql), which such a
-- database does not have.
SELECT r.task_id, r.task_type::text AS task_type, r.task_status AS status,
    r.task_priority AS priority, r.task_error_count AS error_count,
    coalesce(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts) AS failed_at,
    r.task_last_error AS last_error,
    (SELECT count(*) FROM sk_task_results_t t WHERE t.task_status IN (4, 5, 6)) AS total
FROM sk_task_results_t r
WHERE r.task_status IN (4, 5, 6)
ORDER BY failed_at DESC NULLS LAST, r.task_id
LIMIT %(cap)s
