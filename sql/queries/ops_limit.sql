-- Set a task type's limits (NULL: none), type-wide and per key. Claims read
-- them in their own statement (claim.sql), so running workers follow at their
-- next claim. The rate windows are kept: claims already counted in them still
-- count; without a rate per key the type's key windows are deleted.
WITH stored AS (
    INSERT INTO sk_task_types_t AS t (task_type, tt_max_running, tt_rate_count, tt_rate_seconds,
        tt_key_path, tt_key_max_running, tt_key_rate_count, tt_key_rate_seconds)
    VALUES (%(task_type)s, %(max_running)s, %(rate_count)s, %(rate_seconds)s,
        %(key_path)s::text[], %(key_max_running)s, %(key_rate_count)s, %(key_rate_seconds)s)
    ON CONFLICT (task_type) DO UPDATE SET
        tt_max_running = EXCLUDED.tt_max_running,
        tt_rate_count = EXCLUDED.tt_rate_count,
        tt_rate_seconds = EXCLUDED.tt_rate_seconds,
        tt_key_path = EXCLUDED.tt_key_path,
        tt_key_max_running = EXCLUDED.tt_key_max_running,
        tt_key_rate_count = EXCLUDED.tt_key_rate_count,
        tt_key_rate_seconds = EXCLUDED.tt_key_rate_seconds,
        tt_updated_at_ts = now()
    RETURNING t.task_type
),
forgotten AS (
    DELETE FROM sk_task_key_windows_t w
    WHERE w.task_type = %(task_type)s AND %(key_rate_count)s::integer IS NULL
)
SELECT s.task_type FROM stored s
