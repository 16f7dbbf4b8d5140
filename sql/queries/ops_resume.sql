-- Resume a paused task type. Returns a row only when the state changed.
UPDATE sk_task_types_t SET tt_paused = false, tt_paused_at_ts = NULL, tt_updated_at_ts = now()
WHERE task_type = %(task_type)s AND tt_paused
RETURNING task_type
