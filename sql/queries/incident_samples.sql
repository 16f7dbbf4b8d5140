-- The failed attempts (4 Error, 5 Faulted, 6 Fatal) that ended from %(since)s
-- until %(until)s and are still kept (sk_attempts_t: a purge deletes a job's
-- attempts with it), newest first, at most %(limit)s, with their job's type
-- while its result row is there: the sample errors of an incident bundle
-- (skconsole incident export), grouped by signature in Python.
SELECT a.task_id, a.attempt, a.ended_at_ts AS ended_at, a.status, a.error,
    r.task_type::text AS task_type
FROM sk_attempts_t a
LEFT JOIN sk_task_results_t r ON r.task_id = a.task_id
WHERE a.ended_at_ts >= %(since)s AND a.ended_at_ts < %(until)s
    AND a.status IN (4, 5, 6) AND a.error IS NOT NULL
ORDER BY a.ended_at_ts DESC
LIMIT %(limit)s
