-- The per-minute gauges (148_skconsole_record_gauges.sql) from %(since)s until
-- %(until)s: per minute and task type the jobs waiting (ready: due; scheduled:
-- not yet due) and running, and in the row of type '' the totals and the
-- workers alive. Read by the minute (the primary key leads with it).
SELECT g.minute, g.task_type::text AS task_type, g.ready, g.scheduled, g.running, g.workers,
    g.estimated
FROM sk_record_gauges_t g
WHERE g.minute >= %(since)s AND g.minute < %(until)s
ORDER BY g.minute, g.task_type
