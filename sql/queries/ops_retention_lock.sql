-- A task type's retention policy (NULL: the default's), its row locked until the
-- change's transaction ends (no row: none set), so the audit row records what the
-- change replaced.
SELECT ret_older_than_seconds AS older_than_s, ret_include_faulted AS include_faulted
FROM sk_retention_t WHERE ret_task_type = coalesce(%(task_type)s::text, '')
FOR UPDATE
