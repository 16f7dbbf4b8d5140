-- Every retention policy ('' is the default), the server's clock with it.
SELECT ret_task_type, ret_older_than_seconds, ret_include_faulted, ret_set_at_ts, ret_set_by,
    now()
FROM sk_retention_t
ORDER BY ret_task_type
