-- Whether this minute's gauges (148_skconsole_record_gauges.sql) are still to be
-- written: one index probe, so that a worker whose upkeep comes second counts nothing.
SELECT NOT EXISTS (
    SELECT 1 FROM sk_record_gauges_t g
    WHERE g.minute = date_trunc('minute', now()) AND g.task_type = ''
) AS due
