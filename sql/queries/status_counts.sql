SELECT task_status, count(*) FROM sk_task_results_t GROUP BY task_status ORDER BY 1
