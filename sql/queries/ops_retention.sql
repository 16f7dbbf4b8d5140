-- Set a task type's retention policy (NULL type: the default), or remove it (NULL
-- older_than_s). The workers read policies at each round (retention_policies.sql).
-- One row back when it stored or removed one.
WITH gone AS (
    DELETE FROM sk_retention_t
    WHERE ret_task_type = coalesce(%(task_type)s::text, '')
        AND %(older_than_s)s::double precision IS NULL
    RETURNING ret_task_type
),
stored AS (
    INSERT INTO sk_retention_t (ret_task_type, ret_older_than_seconds, ret_include_faulted,
        ret_set_at_ts, ret_set_by)
    SELECT coalesce(%(task_type)s::text, ''), %(older_than_s)s::double precision,
        coalesce(%(include_faulted)s::boolean, false), now(), %(set_by)s
    WHERE %(older_than_s)s::double precision IS NOT NULL
    ON CONFLICT (ret_task_type) DO UPDATE SET
        ret_older_than_seconds = EXCLUDED.ret_older_than_seconds,
        ret_include_faulted = EXCLUDED.ret_include_faulted,
        ret_set_at_ts = now(),
        ret_set_by = EXCLUDED.ret_set_by
    RETURNING ret_task_type
)
SELECT ret_task_type AS task_type FROM gone
UNION ALL
SELECT ret_task_type FROM stored
