-- A task type's retention policy (NULL: the default's; no policy: NULLs): for the
-- preview of `skconsole retention set` / `retention clear`.
SELECT r.ret_older_than_seconds AS older_than_s, r.ret_include_faulted AS include_faulted
FROM (SELECT 1) AS one
LEFT JOIN sk_retention_t r ON r.ret_task_type = coalesce(%(task_type)s::text, '')
