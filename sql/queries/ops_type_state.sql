-- What pausing or resuming a type would affect: its switch and its jobs.
SELECT coalesce((SELECT tt_paused FROM sk_task_types_t WHERE task_type = %(task_type)s), false)
        AS paused,
    (SELECT count(*) FROM sk_tasks_queue_t WHERE task_type = %(task_type)s) AS waiting,
    (SELECT count(*) FROM sk_task_results_t WHERE task_status = 2 AND task_type = %(task_type)s)
        AS in_flight
