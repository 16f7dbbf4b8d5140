-- The paused task types (skconsole's task-types table; the depth queries read
-- Stakhanovise.NET's tables only).
SELECT task_type::text FROM sk_task_types_t WHERE tt_paused
