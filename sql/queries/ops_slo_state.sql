-- A task type's SLOs (none when it has no row) and what it holds now: for the
-- preview of `skconsole slo set` / `slo clear`.
SELECT t.tt_slo_max_wait_seconds AS slo_max_wait_seconds,
    t.tt_slo_max_failure_rate AS slo_max_failure_rate,
    (SELECT count(*) FROM sk_tasks_queue_t q
     WHERE q.task_type = %(task_type)s AND q.task_locked_until_ts < now()) AS ready,
    (SELECT extract(epoch FROM now() - min(q.task_locked_until_ts))::double precision
     FROM sk_tasks_queue_t q
     WHERE q.task_type = %(task_type)s AND q.task_locked_until_ts < now()
         -- an age only from a time within 100 years (as depth.sql)
         AND q.task_locked_until_ts > now() - interval '36500 days') AS oldest_ready_s
FROM (SELECT 1) AS one
LEFT JOIN sk_task_types_t t ON t.task_type = %(task_type)s
