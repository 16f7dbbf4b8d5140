-- Roll the per-minute record (146_skconsole_record.sql): the rows statements
-- added for minutes before the current one leave sk_record_fresh_t and are
-- added into sk_record_t, one row per minute, type and signature, at each grain
-- (the minute, its quarter hour, its hour: %(grains)s); then what is
-- older than the record keeps (%(keep_s)s seconds) is trimmed. Any worker's
-- upkeep runs it, and several at once never count a row twice nor wait for each
-- other: a fresh row is taken by one roll only (SKIP LOCKED), its delete and
-- its addition commit together, and a row written late for a minute already
-- rolled is added to it by a later roll. At most %(batch)s rows a round each.
-- Never touched by purge or retention, which delete job rows only.
WITH taken AS (
    DELETE FROM sk_record_fresh_t f
    WHERE f.ctid = ANY(ARRAY(
        SELECT x.ctid FROM sk_record_fresh_t x
        WHERE x.minute < date_trunc('minute', now())
        LIMIT %(batch)s
        FOR UPDATE SKIP LOCKED))
    RETURNING f.*
),
added AS (
    INSERT INTO sk_record_t AS r (grain, minute, task_type, signature, posted, started,
        succeeded, failed_recoverable, failed_faulted, failed_fatal, cancelled, reaped,
        wait_hist, wait_max_ms, run_hist, run_max_ms)
    SELECT g.grain, to_timestamp(floor(extract(epoch FROM t.minute) / (g.grain * 60)) * g.grain * 60),
        t.task_type, t.signature, sum(t.posted), sum(t.started), sum(t.succeeded),
        sum(t.failed_recoverable), sum(t.failed_faulted), sum(t.failed_fatal),
        sum(t.cancelled), sum(t.reaped),
        sk_record_hist_sum(sk_record_hist_of(t.wait_ms)),
        max((SELECT max(x) FROM unnest(t.wait_ms) AS x)),
        sk_record_hist_sum(sk_record_hist_of(t.run_ms)),
        max((SELECT max(x) FROM unnest(t.run_ms) AS x))
    FROM taken t CROSS JOIN unnest(%(grains)s::smallint[]) AS g(grain)
    GROUP BY 1, 2, 3, 4
    -- in key order: two rolls adding into the same rows lock them in one order (no deadlock)
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (grain, minute, task_type, signature) DO UPDATE SET
        posted = r.posted + EXCLUDED.posted,
        started = r.started + EXCLUDED.started,
        succeeded = r.succeeded + EXCLUDED.succeeded,
        failed_recoverable = r.failed_recoverable + EXCLUDED.failed_recoverable,
        failed_faulted = r.failed_faulted + EXCLUDED.failed_faulted,
        failed_fatal = r.failed_fatal + EXCLUDED.failed_fatal,
        cancelled = r.cancelled + EXCLUDED.cancelled,
        reaped = r.reaped + EXCLUDED.reaped,
        wait_hist = sk_record_hist_add(r.wait_hist, EXCLUDED.wait_hist),
        wait_max_ms = greatest(r.wait_max_ms, EXCLUDED.wait_max_ms),
        run_hist = sk_record_hist_add(r.run_hist, EXCLUDED.run_hist),
        run_max_ms = greatest(r.run_max_ms, EXCLUDED.run_max_ms)
    RETURNING 1
),
trimmed AS (
    DELETE FROM sk_record_t r
    WHERE r.ctid = ANY(ARRAY(
        SELECT x.ctid FROM sk_record_t x
        WHERE x.minute < now() - %(keep_s)s * interval '1 second'
        LIMIT %(batch)s
        FOR UPDATE SKIP LOCKED))
    RETURNING 1
)
SELECT (SELECT count(*) FROM taken)::integer AS rolled,
    (SELECT count(*) FROM added)::integer AS spans,
    (SELECT count(*) FROM trimmed)::integer AS trimmed
