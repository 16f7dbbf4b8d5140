-- A task type's limits, its row locked until the limit's transaction ends
-- (no row: no limits), so the audit row records what the change replaced.
SELECT tt_max_running AS max_running, tt_rate_count AS rate_count,
    tt_rate_seconds AS rate_seconds, tt_key_path AS key_path,
    tt_key_max_running AS key_max_running, tt_key_rate_count AS key_rate_count,
    tt_key_rate_seconds AS key_rate_seconds
FROM sk_task_types_t WHERE task_type = %(task_type)s
FOR UPDATE
