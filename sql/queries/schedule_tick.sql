-- Take one tick of a schedule: move its last tick forward to it and, unless
-- the tick is skipped as missed, post its job under the tick's id, all in one
-- statement. Only one worker's UPDATE can move the tick (the others wait for
-- its row lock, then find the tick taken), and the job is inserted only when
-- its result row is new, so a tick is posted at most once: never again by a
-- late worker, nor after its job ran. A paused type's ticks are left alone.
WITH moved AS (
    UPDATE sk_schedules_t s SET
        sch_last_tick_ts = %(tick)s,
        sch_last_task_id = CASE WHEN %(post)s THEN %(id)s::uuid ELSE s.sch_last_task_id END,
        sch_last_posted_ts = CASE WHEN %(post)s THEN now() ELSE s.sch_last_posted_ts END
    WHERE s.task_type = %(type)s
        AND (s.sch_last_tick_ts IS NULL OR s.sch_last_tick_ts < %(tick)s)
        AND NOT EXISTS (
            SELECT 1 FROM sk_task_types_t p WHERE p.task_type = s.task_type AND p.tt_paused)
    RETURNING s.sch_payload
),
r AS (
    INSERT INTO sk_task_results_t (
        task_id, task_type, task_source, task_payload, task_status, task_priority,
        task_error_count, task_last_error_is_recoverable, task_processing_time_milliseconds,
        task_posted_at_ts)
    SELECT %(id)s, %(type)s, %(source)s, coalesce(sch_payload, 'null'), 1, 0, 0, false, 0, now()
    FROM moved WHERE %(post)s
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id, task_payload
),
q AS (
    INSERT INTO sk_tasks_queue_t (
        task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT task_id, %(type)s, %(source)s, task_payload, 0, now(), now() FROM r
    RETURNING task_id
)
SELECT (SELECT count(*) FROM moved) AS taken, s.posted,
    CASE WHEN s.posted > 0 THEN pg_notify('sk_task_queue_item_added', '') END AS notified
FROM (SELECT count(*) AS posted FROM q) AS s
