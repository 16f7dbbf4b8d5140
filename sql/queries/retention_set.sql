-- Set one retention policy; returns the one it replaced (NULLs if none).
WITH old AS (
    SELECT ret_older_than_seconds, ret_include_faulted FROM sk_retention_t
    WHERE ret_task_type = %(task_type)s
    FOR UPDATE
),
new AS (
    INSERT INTO sk_retention_t (ret_task_type, ret_older_than_seconds, ret_include_faulted,
        ret_set_at_ts, ret_set_by)
    VALUES (%(task_type)s, %(older_than_s)s, %(include_faulted)s, now(), %(set_by)s)
    ON CONFLICT (ret_task_type) DO UPDATE SET
        ret_older_than_seconds = EXCLUDED.ret_older_than_seconds,
        ret_include_faulted = EXCLUDED.ret_include_faulted,
        ret_set_at_ts = now(),
        ret_set_by = EXCLUDED.ret_set_by
    RETURNING 1
)
SELECT (SELECT ret_older_than_seconds FROM old), (SELECT ret_include_faulted FROM old),
    (SELECT count(*) FROM new)
