-- A task type's SLOs, its row locked until the change's transaction ends (no
-- row: none set), so the audit row records what the change replaced.
SELECT tt_slo_max_wait_seconds AS slo_max_wait_seconds,
    tt_slo_max_failure_rate AS slo_max_failure_rate
FROM sk_task_types_t WHERE task_type = %(task_type)s
FOR UPDATE
