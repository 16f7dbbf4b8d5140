-- Set a task type's limits (NULL: none). Claims read them in their own
-- statement (claim.sql), so running workers follow at their next claim. The
-- rate window is kept: claims already counted in it still count.
INSERT INTO sk_task_types_t AS t (task_type, tt_max_running, tt_rate_count, tt_rate_seconds)
VALUES (%(task_type)s, %(max_running)s, %(rate_count)s, %(rate_seconds)s)
ON CONFLICT (task_type) DO UPDATE SET
    tt_max_running = EXCLUDED.tt_max_running,
    tt_rate_count = EXCLUDED.tt_rate_count,
    tt_rate_seconds = EXCLUDED.tt_rate_seconds,
    tt_updated_at_ts = now()
RETURNING t.task_type
