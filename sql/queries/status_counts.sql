SELECT task_status AS status, count(*) AS jobs FROM sk_task_results_t GROUP BY task_status ORDER BY 1
