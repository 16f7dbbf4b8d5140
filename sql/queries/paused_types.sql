-- The paused task types (skconsole's task-types table; the depth queries read
-- Stakhanovise.NET's tables only).
SELECT task_type::text AS task_type FROM sk_task_types_t WHERE tt_paused
