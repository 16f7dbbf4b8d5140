-- Jobs in 2 Processing and the hung ones among them, per task type, by the one
-- liveness and hung verdict (sk_inflight_tasks): exact counts, without the job
-- rows the inflight read model lists; and of the running attempts that reported
-- progress (ctx.progress, sk_task_progress_t with their claim id): how many, the
-- least advanced fraction, and the age of the oldest report (a stalled job).
SELECT i.task_type::text AS task_type, count(*) AS in_flight,
    count(*) FILTER (WHERE i.hung_reason IS NOT NULL) AS hung,
    count(p.task_id) AS reporting,
    min(p.progress_fraction) AS progress_min,
    max(extract(epoch FROM clock_timestamp() - p.progress_at_ts))::double precision
        AS progress_age_max_s
FROM sk_inflight_tasks(%(unowned_s)s) i
LEFT JOIN sk_task_progress_t p ON p.task_id = i.task_id AND p.claim_id = i.claim_id
GROUP BY i.task_type
ORDER BY 1
