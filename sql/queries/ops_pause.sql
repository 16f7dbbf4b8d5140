-- Pause a task type: workers stop claiming it (claim.sql skips paused types).
-- Returns a row only when the state changed.
INSERT INTO sk_task_types_t AS t (task_type, tt_paused, tt_paused_at_ts)
VALUES (%(task_type)s, true, now())
ON CONFLICT (task_type) DO UPDATE SET
    tt_paused = true, tt_paused_at_ts = now(), tt_updated_at_ts = now()
WHERE NOT t.tt_paused
RETURNING t.task_type
