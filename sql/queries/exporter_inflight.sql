-- Jobs in 2 Processing and the hung ones among them, per task type, by the one
-- liveness and hung verdict (sk_inflight_tasks): exact counts, without the job
-- rows the inflight read model lists.
SELECT i.task_type::text AS task_type, count(*) AS in_flight,
    count(*) FILTER (WHERE i.hung_reason IS NOT NULL) AS hung
FROM sk_inflight_tasks(%(unowned_s)s) i
GROUP BY i.task_type
ORDER BY 1
