-- The per-minute record (146_skconsole_record.sql) from %(since)s until
-- %(until)s, added up in steps of %(step_s)s seconds counted from %(since)s:
-- per step, type and signature ('' the type's own counts), the rolled minutes
-- and the rows no upkeep has rolled yet, together (exact whenever it runs: a
-- roll moves rows from one to the other in one commit). %(types)s: only these
-- types (NULL: all); with %(combined)s, every type added into one (task_type
-- ''), the signatures too; without %(signatures)s, the types' own rows
-- alone. The latency histograms are added only when %(latency)s
-- (adding them is most of this read's cost). The rolled rows are read at %(grain)s (1, 15 or 60
-- minutes: the coarsest that divides the step and %(since)s), by the primary
-- key; sk_record_fresh_t by its index of minute.
WITH kept AS (
    SELECT r.minute, r.task_type, r.signature, r.posted, r.started, r.succeeded,
        r.failed_recoverable, r.failed_faulted, r.failed_fatal, r.cancelled, r.reaped,
        r.wait_hist, r.wait_max_ms, r.run_hist, r.run_max_ms
    FROM sk_record_t r
    WHERE r.grain = %(grain)s AND r.minute >= %(since)s AND r.minute < %(until)s
        AND (%(signatures)s OR r.signature = '')
        AND (%(types)s::text[] IS NULL OR r.task_type = ANY(%(types)s::text[]))
    UNION ALL
    SELECT f.minute, f.task_type, f.signature, f.posted, f.started, f.succeeded,
        f.failed_recoverable, f.failed_faulted, f.failed_fatal, f.cancelled, f.reaped,
        CASE WHEN %(latency)s THEN sk_record_hist_of(f.wait_ms) END,
        CASE WHEN %(latency)s THEN (SELECT max(x) FROM unnest(f.wait_ms) AS x) END,
        CASE WHEN %(latency)s THEN sk_record_hist_of(f.run_ms) END,
        CASE WHEN %(latency)s THEN (SELECT max(x) FROM unnest(f.run_ms) AS x) END
    FROM sk_record_fresh_t f
    WHERE f.minute >= %(since)s AND f.minute < %(until)s
        AND (%(signatures)s OR f.signature = '')
        AND (%(types)s::text[] IS NULL OR f.task_type = ANY(%(types)s::text[]))
)
SELECT %(since)s::timestamptz + floor(extract(epoch FROM k.minute - %(since)s::timestamptz)
        / %(step_s)s) * %(step_s)s * interval '1 second' AS at,
    CASE WHEN %(combined)s THEN '' ELSE k.task_type END AS task_type, k.signature,
    sum(k.posted)::bigint AS posted, sum(k.started)::bigint AS started,
    sum(k.succeeded)::bigint AS succeeded, sum(k.failed_recoverable)::bigint AS failed_recoverable,
    sum(k.failed_faulted)::bigint AS failed_faulted, sum(k.failed_fatal)::bigint AS failed_fatal,
    sum(k.cancelled)::bigint AS cancelled, sum(k.reaped)::bigint AS reaped,
    sk_record_hist_sum(k.wait_hist) FILTER (WHERE %(latency)s) AS wait_hist,
    max(k.wait_max_ms) FILTER (WHERE %(latency)s)::double precision AS wait_max_ms,
    sk_record_hist_sum(k.run_hist) FILTER (WHERE %(latency)s) AS run_hist,
    max(k.run_max_ms) FILTER (WHERE %(latency)s)::double precision AS run_max_ms,
    (SELECT least((SELECT min(minute) FROM sk_record_t WHERE grain = 1),
        (SELECT min(minute) FROM sk_record_fresh_t))) AS starts_at,
    -- the oldest minute no roll has taken yet: long ago, no worker's upkeep runs
    (SELECT min(minute) FROM sk_record_fresh_t) AS unrolled_since
FROM kept k
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3
