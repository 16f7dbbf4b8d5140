-- Before a reap acts (and in its preview): the task types of the hung jobs it is
-- about to put back, each job by its primary key; the reap says which of them no
-- live worker runs (nothing would take them up).
SELECT DISTINCT r.task_type::text AS task_type
FROM sk_task_results_t r
WHERE r.task_id = ANY(%(ids)s::uuid[])
ORDER BY task_type
