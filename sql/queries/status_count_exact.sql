-- Jobs in the given statuses, counted exactly (for the small ones: 2, 4, 5, 6).
SELECT task_status AS status, count(*) AS jobs FROM sk_task_results_t
WHERE task_status = ANY(%(statuses)s::integer[])
GROUP BY task_status
