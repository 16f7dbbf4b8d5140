-- Publish this worker's per-type settings, so every reaper and the console
-- judge a job by the timeout of the code that runs it. The pause flag is
-- the operators' and is left alone.
INSERT INTO sk_task_types_t AS t (task_type, tt_timeout_seconds, tt_max_attempts)
SELECT * FROM unnest(%(types)s::varchar[], %(timeouts)s::double precision[], %(max_attempts)s::integer[])
ON CONFLICT (task_type) DO UPDATE SET
    tt_timeout_seconds = EXCLUDED.tt_timeout_seconds,
    tt_max_attempts = EXCLUDED.tt_max_attempts,
    tt_updated_at_ts = now()
WHERE t.tt_timeout_seconds IS DISTINCT FROM EXCLUDED.tt_timeout_seconds
    OR t.tt_max_attempts IS DISTINCT FROM EXCLUDED.tt_max_attempts
