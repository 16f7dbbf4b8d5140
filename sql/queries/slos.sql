-- The task types with an SLO (skconsole slo set): the longest a ready job may wait.
SELECT t.task_type::text AS task_type, t.tt_slo_max_wait_seconds AS max_wait_s
FROM sk_task_types_t t
WHERE t.tt_slo_max_wait_seconds IS NOT NULL
