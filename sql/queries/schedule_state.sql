-- The server's time and, per schedule of this worker, the definition stored
-- (the one every worker follows, whatever its own: see worker/schedules.py),
-- the latest tick taken and whether the type is paused (a paused type's ticks
-- are not taken).
SELECT now() AS read_at, s.task_type, s.sch_last_tick_ts AS last_tick,
    coalesce(p.tt_paused, false) AS paused, s.sch_cron AS cron, s.sch_every_seconds AS every_s,
    s.sch_timezone AS timezone, s.sch_payload AS payload, s.sch_missed AS missed,
    s.sch_defined_at_ts AS defined_at
FROM sk_schedules_t s
LEFT JOIN sk_task_types_t p ON p.task_type = s.task_type
WHERE s.task_type = ANY(%(types)s::varchar[])
