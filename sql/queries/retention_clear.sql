-- Remove one retention policy; returns what it was (no row: there was none).
DELETE FROM sk_retention_t WHERE ret_task_type = %(task_type)s
RETURNING ret_older_than_seconds, ret_include_faulted
