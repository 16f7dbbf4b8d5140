-- This minute's gauges (148_skconsole_record_gauges.sql): per task type the jobs
-- waiting (%(ready)s due, %(scheduled)s not yet due) and %(running)s, as the
-- depth read counted them (depth.sql, or depth_estimated.sql on a big queue:
-- %(estimated)s), and in the row of type '' their totals and the workers alive
-- now (sk_worker_liveness). The first worker to write a minute wins; a later one
-- writes nothing (ON CONFLICT DO NOTHING). Then what is older than the record
-- keeps (%(keep_s)s seconds) is trimmed, at most %(batch)s rows.
WITH given AS (
    SELECT t.task_type, t.ready, t.scheduled, t.running
    FROM unnest(%(types)s::text[], %(ready)s::bigint[], %(scheduled)s::bigint[],
        %(running)s::bigint[]) AS t(task_type, ready, scheduled, running)
    WHERE t.task_type <> ''
),
written AS (
    INSERT INTO sk_record_gauges_t (minute, task_type, ready, scheduled, running, workers,
        estimated)
    SELECT date_trunc('minute', now()), g.task_type, g.ready, g.scheduled, g.running, NULL,
        %(estimated)s
    FROM given g
    UNION ALL
    SELECT date_trunc('minute', now()), '', coalesce(sum(g.ready), 0),
        coalesce(sum(g.scheduled), 0), coalesce(sum(g.running), 0),
        (SELECT count(*) FROM sk_worker_liveness() l WHERE l.state = 'alive')::integer,
        %(estimated)s
    FROM given g
    ON CONFLICT (minute, task_type) DO NOTHING
    RETURNING 1
),
trimmed AS (
    DELETE FROM sk_record_gauges_t r
    WHERE r.ctid = ANY(ARRAY(
        SELECT x.ctid FROM sk_record_gauges_t x
        WHERE x.minute < now() - %(keep_s)s * interval '1 second'
        LIMIT %(batch)s
        FOR UPDATE SKIP LOCKED))
    RETURNING 1
)
SELECT (SELECT count(*) FROM written)::integer AS written,
    (SELECT count(*) FROM trimmed)::integer AS trimmed
