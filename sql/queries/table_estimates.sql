-- Row estimates of the big tables from the planner's statistics (no scan):
-- what a read model shows, labelled "estimated", where an exact count would cost too much.
SELECT c.relname::text AS table_name, greatest(c.reltuples, 0)::bigint AS estimate
FROM pg_class c
WHERE c.oid IN (to_regclass('sk_tasks_queue_t'), to_regclass('sk_task_results_t'))
