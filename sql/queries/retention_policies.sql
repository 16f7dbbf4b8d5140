-- Every retention policy ('' is the default).
SELECT ret_task_type AS task_type, ret_older_than_seconds AS older_than_s,
    ret_include_faulted AS include_faulted, ret_set_at_ts AS set_at, ret_set_by AS set_by
FROM sk_retention_t
ORDER BY ret_task_type
