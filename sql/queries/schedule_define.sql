-- Publish this worker's schedules (the last worker started with a changed
-- definition wins). A schedule seen for the first time starts at the next
-- tick: its latest past tick counts as taken, so deploying a nightly job at
-- 14:00 does not run it at once. A changed definition keeps the last tick.
INSERT INTO sk_schedules_t AS s (
    task_type, sch_cron, sch_every_seconds, sch_timezone, sch_payload, sch_missed,
    sch_last_tick_ts)
SELECT * FROM unnest(
    %(types)s::varchar[], %(crons)s::text[], %(every_s)s::double precision[],
    %(timezones)s::text[], %(payloads)s::text[], %(missed)s::varchar[],
    %(latest_ticks)s::timestamptz[])
ON CONFLICT (task_type) DO UPDATE SET
    (sch_cron, sch_every_seconds, sch_timezone, sch_payload, sch_missed, sch_defined_at_ts)
    = (EXCLUDED.sch_cron, EXCLUDED.sch_every_seconds, EXCLUDED.sch_timezone,
       EXCLUDED.sch_payload, EXCLUDED.sch_missed, now())
WHERE (s.sch_cron, s.sch_every_seconds, s.sch_timezone, s.sch_payload, s.sch_missed)
    IS DISTINCT FROM (EXCLUDED.sch_cron, EXCLUDED.sch_every_seconds, EXCLUDED.sch_timezone,
                      EXCLUDED.sch_payload, EXCLUDED.sch_missed)
