-- The task types with an SLO (skconsole slo set): the longest a ready job may
-- wait, and the largest share of its finished jobs that may fail.
SELECT t.task_type::text AS task_type, t.tt_slo_max_wait_seconds AS max_wait_s,
    t.tt_slo_max_failure_rate AS max_failure_rate
FROM sk_task_types_t t
WHERE t.tt_slo_max_wait_seconds IS NOT NULL OR t.tt_slo_max_failure_rate IS NOT NULL
