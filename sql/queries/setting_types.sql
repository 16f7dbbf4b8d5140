-- The task types skconsole's own tables know of: stored settings (paused,
-- limits, SLOs, or registered by a worker: sk_task_types_t), a schedule or a
-- retention policy of their own; with result_types.sql, every known type.
SELECT task_type::text AS task_type FROM sk_task_types_t
UNION SELECT task_type::text FROM sk_schedules_t
UNION SELECT ret_task_type::text FROM sk_retention_t WHERE ret_task_type <> ''
