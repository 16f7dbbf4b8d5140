-- Queue depth on a big queue, where counting every row costs too much. Exact:
-- the list of types (a loose index scan), the oldest ready job (the first
-- entry of each type in the (task_type, task_locked_until_ts) index), in
-- flight (paused: paused_types.sql). Estimated: ready and scheduled, from a sample of
-- %(sample_pct)s %% of the table's pages, scaled up; a type too rare to appear
-- in the sample is counted exactly (it is small by then). The sample is
-- REPEATABLE: the same pages every refresh, so they stay in shared buffers; a
-- fresh random sample read ~440 cold pages and now and then took 150-250 ms.
-- The oldest ready job's age comes only from a time within 100 years of now,
-- as in depth.sql (-infinity cannot be subtracted before PostgreSQL 17).
WITH RECURSIVE types AS (
    (SELECT q.task_type FROM sk_tasks_queue_t q ORDER BY q.task_type LIMIT 1)
    UNION ALL
    SELECT (SELECT q.task_type FROM sk_tasks_queue_t q
            WHERE q.task_type > t.task_type ORDER BY q.task_type LIMIT 1)
    FROM types t
    WHERE t.task_type IS NOT NULL
),
sampled AS (
    SELECT q.task_type,
        count(*) FILTER (WHERE q.task_locked_until_ts < now()) AS ready,
        count(*) FILTER (WHERE q.task_locked_until_ts >= now()) AS scheduled
    FROM sk_tasks_queue_t q TABLESAMPLE SYSTEM (%(sample_pct)s) REPEATABLE (7)
    GROUP BY q.task_type
),
q AS (
    SELECT t.task_type,
        CASE WHEN s.task_type IS NOT NULL THEN round(s.ready * 100.0 / %(sample_pct)s)
             ELSE (SELECT count(*) FROM sk_tasks_queue_t q
                   WHERE q.task_type = t.task_type AND q.task_locked_until_ts < now()) END AS ready,
        CASE WHEN s.task_type IS NOT NULL THEN round(s.scheduled * 100.0 / %(sample_pct)s)
             ELSE (SELECT count(*) FROM sk_tasks_queue_t q
                   WHERE q.task_type = t.task_type AND q.task_locked_until_ts >= now()) END AS scheduled,
        (SELECT min(q.task_locked_until_ts) FROM sk_tasks_queue_t q
         WHERE q.task_type = t.task_type AND q.task_locked_until_ts > now() - interval '36500 days')
            AS first_eligible
    FROM types t
    LEFT JOIN sampled s ON s.task_type = t.task_type
    WHERE t.task_type IS NOT NULL
),
f AS (
    SELECT r.task_type, count(*) AS in_flight
    FROM sk_task_results_t r WHERE r.task_status = 2 GROUP BY r.task_type
)
SELECT coalesce(q.task_type, f.task_type) AS task_type,
    coalesce(q.ready, 0)::bigint AS ready, coalesce(q.scheduled, 0)::bigint AS scheduled,
    coalesce(f.in_flight, 0) AS in_flight,
    CASE WHEN q.first_eligible < now()
         THEN extract(epoch FROM now() - q.first_eligible)::double precision END AS oldest_ready_s
FROM q
FULL JOIN f ON f.task_type = q.task_type
ORDER BY 1
