-- Every published schedule (sk_schedules_t) with the server's clock (its next
-- run is computed from it, in Python: cron rules are cronsim's), whether its
-- type is paused, the status of its latest posted job: NULL when that job
-- was purged (a sub-select, so it is always a primary-key lookup, never a
-- scan of the results table, whatever the statistics of a table as small as
-- sk_schedules_t say), and how many live workers schedule it (NULL when a live
-- worker of an older version, which does not say, might). How many of its
-- jobs wait comes from the depth read model (depth.sql), which stays cheap on
-- a big queue.
WITH live AS MATERIALIZED (
    SELECT w.worker_schedules
    FROM sk_worker_liveness() l
    JOIN sk_workers_t w ON w.worker_id = l.worker_id
    WHERE NOT l.lease_lapsed AND NOT l.stopped
)
SELECT now() AS read_at, s.task_type, s.sch_cron AS cron, s.sch_every_seconds AS every_s,
    s.sch_timezone AS timezone, s.sch_payload AS payload, s.sch_missed AS missed,
    s.sch_last_tick_ts AS last_tick, s.sch_last_task_id AS last_task_id,
    s.sch_last_posted_ts AS last_posted_at, s.sch_defined_at_ts AS defined_at,
    coalesce(p.tt_paused, false) AS paused,
    (SELECT r.task_status FROM sk_task_results_t r WHERE r.task_id = s.sch_last_task_id)
        AS last_status,
    CASE WHEN EXISTS (SELECT 1 FROM live WHERE worker_schedules IS NULL) THEN NULL
         ELSE (SELECT count(*) FROM live WHERE s.task_type = ANY(live.worker_schedules))
    END AS scheduled_by
FROM sk_schedules_t s
LEFT JOIN sk_task_types_t p ON p.task_type = s.task_type
ORDER BY s.task_type
