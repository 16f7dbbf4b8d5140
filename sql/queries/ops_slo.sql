-- Set a task type's SLOs (NULL: none). Only readers use them (flow, check), so
-- nothing else about the type changes.
INSERT INTO sk_task_types_t AS t (task_type, tt_slo_max_wait_seconds, tt_slo_max_failure_rate)
VALUES (%(task_type)s, %(slo_max_wait_seconds)s, %(slo_max_failure_rate)s)
ON CONFLICT (task_type) DO UPDATE SET
    tt_slo_max_wait_seconds = EXCLUDED.tt_slo_max_wait_seconds,
    tt_slo_max_failure_rate = EXCLUDED.tt_slo_max_failure_rate,
    tt_updated_at_ts = now()
RETURNING t.task_type
