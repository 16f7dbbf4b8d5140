-- skconsole's additive objects: the per-minute record (schema version 9), what the
-- queue did minute by minute, kept apart from the job rows so that a purge or a
-- retention pass, which delete job rows, never delete the past with them.
-- Re-runnable.
--
-- Per minute and task type: jobs posted, attempts started, jobs succeeded,
-- failed attempts by kind (recoverable 4, faulted 5, fatal 6), cancelled jobs,
-- reaped attempts, and a histogram of wait and of run times; per minute, type
-- and failure signature, the failures of that signature. Written by a trigger
-- on the results table (sk_record_note_*, below), so every statement that
-- changes a job records what it did within itself: the engine's posts, claims,
-- finishes and reaps, a COPY of many posts, an operator's cancel, and a
-- Stakhanovise.NET application's own writes when it shares the database. No
-- extra round trip, and no row that every writer updates: each statement adds
-- rows of its own to sk_record_fresh_t (append only), and a worker's upkeep
-- rolls finished minutes into sk_record_t (record_roll.sql), one row per
-- minute, type and signature, and trims what is older than the record keeps.
-- A read adds the two (record.sql): exact at any moment, whoever rolled.

-- What a row of either table holds. signature '' is the type's own row (every
-- count); any other is a failure signature's row (sk_signature_key of the
-- stored signature), counting only its failures (failed_*, reaped). A fresh
-- row keeps the wait and run times of its statement's attempts as they are
-- (one array_agg: the least a trigger can do); the roll makes them histograms
-- (sk_record_bucket): one count per bucket from 0, the array as long as its
-- highest bucket needs. The maxima are exact.
CREATE TABLE IF NOT EXISTS sk_record_fresh_t (
    minute timestamptz NOT NULL,
    task_type varchar(250) NOT NULL,
    signature text NOT NULL DEFAULT '',
    posted integer NOT NULL DEFAULT 0,
    started integer NOT NULL DEFAULT 0,
    succeeded integer NOT NULL DEFAULT 0,
    failed_recoverable integer NOT NULL DEFAULT 0,
    failed_faulted integer NOT NULL DEFAULT 0,
    failed_fatal integer NOT NULL DEFAULT 0,
    cancelled integer NOT NULL DEFAULT 0,
    reaped integer NOT NULL DEFAULT 0,
    wait_ms double precision[],
    run_ms double precision[]
);
-- the minutes a read asks for, and the roll's "finished minutes". BRIN, not a
-- b-tree: every statement of a minute inserts the same key, and a b-tree's
-- inserts into one page of equal keys cost a single post 10 % (a BRIN insert
-- costs about nothing; the table is small, as the roll keeps it)
DROP INDEX IF EXISTS idx_sk_record_fresh_minute;
CREATE INDEX IF NOT EXISTS idx_sk_record_fresh_minute_brin ON sk_record_fresh_t
    USING brin (minute);

-- The rolled record, at three grains: each row of sk_record_fresh_t is added
-- into its minute (grain 1), its quarter hour (15) and its hour (60), minute
-- holding the start of that span (UTC-aligned), so a chart over a day or a week
-- adds a few thousand rows, not every minute of it.
CREATE TABLE IF NOT EXISTS sk_record_t (
    grain smallint NOT NULL,
    minute timestamptz NOT NULL,
    task_type varchar(250) NOT NULL,
    signature text NOT NULL DEFAULT '',
    posted integer NOT NULL DEFAULT 0,
    started integer NOT NULL DEFAULT 0,
    succeeded integer NOT NULL DEFAULT 0,
    failed_recoverable integer NOT NULL DEFAULT 0,
    failed_faulted integer NOT NULL DEFAULT 0,
    failed_fatal integer NOT NULL DEFAULT 0,
    cancelled integer NOT NULL DEFAULT 0,
    reaped integer NOT NULL DEFAULT 0,
    wait_hist integer[],
    wait_max_ms double precision,
    run_hist integer[],
    run_max_ms double precision,
    CONSTRAINT pk_sk_record_t PRIMARY KEY (grain, minute, task_type, signature)
);

-- The latency bucket of a time in milliseconds: 0 below 1 ms, then two buckets
-- per doubling (bucket b >= 1 holds [2^((b-1)/2), 2^(b/2)) ms), the last (63)
-- everything from about 2^31 ms (25 days) on. skconsole.core.latency holds the
-- same edges, and reads percentiles from them (a test checks they agree).
CREATE OR REPLACE FUNCTION sk_record_bucket(ms double precision)
RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT (CASE WHEN ms IS NULL THEN NULL WHEN ms < 1 THEN 0
        WHEN ms >= 2147483648 OR ms = 'NaN' THEN 63
        ELSE least(63, 1 + floor(2 * ln(ms) / ln(2))) END)::smallint
$$;

-- Times in milliseconds as a histogram: one count per bucket from 0 (NULL for
-- none). The roll's, and a read's of the rows not rolled yet.
CREATE OR REPLACE FUNCTION sk_record_hist_of(ms double precision[])
RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN cardinality(ms) > 0 THEN ARRAY(
        SELECT count(b.b)::integer
        FROM generate_series(0, (SELECT max(sk_record_bucket(x)) FROM unnest(ms) AS x)) AS g
        LEFT JOIN (SELECT sk_record_bucket(x) AS b FROM unnest(ms) AS x) AS b ON b.b = g
        GROUP BY g ORDER BY g) END
$$;

-- The minute an event counts in: the row's own time for it when it has a usable
-- one, else the statement's. A trigger must never refuse a write, and a row may
-- carry NULL or infinite times (written by hand, by another application).
CREATE OR REPLACE FUNCTION sk_record_minute(at timestamptz)
RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT date_trunc('minute', CASE WHEN isfinite(at) THEN at ELSE now() END) $$;

-- Milliseconds from one instant to a later one (0 when earlier), NULL when either
-- is missing or infinite: a time the record cannot histogram is left out of it.
CREATE OR REPLACE FUNCTION sk_record_ms(later timestamptz, earlier timestamptz)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN isfinite(later) AND isfinite(earlier)
        THEN greatest(0, extract(epoch FROM later - earlier) * 1000) END
$$;

-- Two histograms added bucket by bucket (either may be NULL or shorter).
CREATE OR REPLACE FUNCTION sk_record_hist_add(a integer[], b integer[])
RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a
        ELSE ARRAY(SELECT coalesce(x, 0) + coalesce(y, 0)
                   FROM unnest(a, b) WITH ORDINALITY AS u(x, y, i) ORDER BY i) END
$$;

DO $$
BEGIN
    -- histograms added into one (the roll, a read over many minutes)
    IF to_regproc('sk_record_hist_sum') IS NULL THEN
        CREATE AGGREGATE sk_record_hist_sum(integer[]) (
            SFUNC = sk_record_hist_add, STYPE = integer[]);
    END IF;
END
$$;

-- When the attempt now running became due: its queue row's task_locked_until_ts,
-- which the claim deletes (claim.sql copies it here), so the record can say how
-- long a job waited once due. NULL for a claim that is not skconsole's.
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_due_at_ts timestamptz;

-- The trigger functions: what the rows a statement inserted or updated say it
-- did. SECURITY DEFINER, on the search path they were made on: a Stakhanovise.NET
-- application's role that may write the job tables but not ours still records.
-- A new row is a post (and, made 2 Processing by a claim of a queue row posted
-- by hand, a start; made 7 Cancelled, a cancel). An updated row is:
--   posted     1 Unprocessed with a new posted time (a keyed re-post of a
--              finished job);
--   started    2 Processing under a new attempt (a new fencing token, or from
--              another status: a claim that is not skconsole's); waited from
--              sk_due_at_ts, else for a first attempt from its post;
--   succeeded  3 Processed, from another status; ran for the processing time
--              the statement added;
--   failed     4, 5 or 6 with one more error counted; reaped when the error is
--              skconsole.HungJob (reap.sql), by the status it left (4, 5);
--   cancelled  7 Cancelled, from another status.
-- Both bodies pass sk_record_minute() and sk_record_ms() plain columns of a
-- subquery, never expressions: PostgreSQL inlines an SQL function that uses an
-- argument twice only when that argument is cheap.
CREATE OR REPLACE FUNCTION sk_record_note_inserted()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT
AS $$
BEGIN
    -- one statement, planned once per session, one level of builtin aggregates: a
    -- post's whole cost here
    INSERT INTO sk_record_fresh_t (minute, task_type, signature, posted, started, succeeded,
        failed_recoverable, failed_faulted, failed_fatal, cancelled, wait_ms)
    SELECT sk_record_minute(e.at), e.task_type, e.signature,
        count(*) FILTER (WHERE e.status IS NULL),
        count(*) FILTER (WHERE e.status = 2),
        count(*) FILTER (WHERE e.status = 3),
        count(*) FILTER (WHERE e.status = 4),
        count(*) FILTER (WHERE e.status = 5),
        count(*) FILTER (WHERE e.status = 6),
        count(*) FILTER (WHERE e.status = 7),
        array_agg(sk_record_ms(e.started_at, e.due_at)) FILTER (WHERE e.status = 2)
    FROM (
        -- every new row is a post
        SELECT NULL::integer AS status, n.task_posted_at_ts AS at, n.task_type,
            ''::text AS signature, NULL::timestamptz AS started_at, NULL::timestamptz AS due_at
        FROM new_rows n
        UNION ALL
        -- made 2 Processing: a claim of a queue row posted by hand; made 3-7: a row
        -- written finished (a fan-in child posted cancelled, rows copied in); a
        -- failure counts in its signature's row too
        SELECT n.task_status,
            CASE WHEN n.task_status = 2 THEN n.task_last_processing_attempted_at_ts
                ELSE coalesce(n.task_processing_finalized_at_ts,
                    n.task_last_processing_attempted_at_ts) END,
            n.task_type, s.signature, n.task_last_processing_attempted_at_ts,
            coalesce(n.sk_due_at_ts, n.task_posted_at_ts)
        FROM new_rows n
        CROSS JOIN LATERAL (
            SELECT '' AS signature
            UNION ALL
            SELECT sk_signature_key(n.sk_error_signature) WHERE n.task_status IN (4, 5, 6)
        ) AS s
        WHERE n.task_status >= 2
    ) AS e
    GROUP BY 1, 2, 3;
    RETURN NULL;
END
$$;

-- The old and new rows are joined by hash, never by a nested loop: the plan is
-- made once per session, on the first statement's row counts, and a nested loop
-- made for one row walked every old row for every new one in a 200-job finish
-- (a quarter of the drain's rate).
CREATE OR REPLACE FUNCTION sk_record_note_updated()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET enable_nestloop = off
AS $$
BEGIN
    INSERT INTO sk_record_fresh_t (minute, task_type, signature, posted, started, succeeded,
        failed_recoverable, failed_faulted, failed_fatal, cancelled, reaped, wait_ms, run_ms)
    SELECT sk_record_minute(e.at), e.task_type, s.signature,
        count(*) FILTER (WHERE e.reposted AND s.signature = ''),
        count(*) FILTER (WHERE e.status = 2 AND s.signature = ''),
        count(*) FILTER (WHERE e.status = 3 AND s.signature = ''),
        count(*) FILTER (WHERE e.status = 4),
        count(*) FILTER (WHERE e.status = 5),
        count(*) FILTER (WHERE e.status = 6),
        count(*) FILTER (WHERE e.status = 7 AND s.signature = ''),
        count(*) FILTER (WHERE e.reaped),
        array_agg(sk_record_ms(e.started_at, e.due_at))
            FILTER (WHERE e.status = 2 AND s.signature = ''),
        array_agg(e.run_ms) FILTER (WHERE e.run_ms IS NOT NULL AND s.signature = '')
    FROM (
        SELECT n.task_status AS status, n.task_type, n.sk_error_signature,
            -- a keyed re-post of a finished job posts it again (post_jobs.sql)
            n.task_status = 1 AND n.task_posted_at_ts IS DISTINCT FROM o.task_posted_at_ts
                AS reposted,
            -- a reap's failure (reap.sql) is the only one signed skconsole.HungJob
            n.task_status IN (4, 5, 6) AND n.sk_error_signature LIKE 'skconsole.HungJob%' AS reaped,
            CASE WHEN n.task_status = 2 THEN n.task_last_processing_attempted_at_ts
                 WHEN n.task_status = 1 THEN n.task_posted_at_ts END AS at,
            -- waited from when it fell due, else (a first attempt) from its post
            n.task_last_processing_attempted_at_ts AS started_at,
            coalesce(n.sk_due_at_ts, CASE WHEN o.task_first_processing_attempted_at_ts IS NULL
                THEN n.task_posted_at_ts END) AS due_at,
            CASE WHEN n.task_status IN (3, 4, 5, 6) THEN greatest(0,
                n.task_processing_time_milliseconds - o.task_processing_time_milliseconds)::float8
                END AS run_ms
        FROM old_rows o
        JOIN new_rows n ON n.task_id = o.task_id
        WHERE (n.task_status = 2 AND (o.task_status <> 2
                OR n.sk_claim_id IS DISTINCT FROM o.sk_claim_id))
            OR (n.task_status = 3 AND o.task_status <> 3)
            OR (n.task_status = 7 AND o.task_status <> 7)
            OR (n.task_status IN (4, 5, 6) AND n.task_error_count > o.task_error_count)
            OR (n.task_status = 1 AND n.task_posted_at_ts IS DISTINCT FROM o.task_posted_at_ts)
    ) AS e
    -- each event counts in its type's row; a failure in its signature's row too
    CROSS JOIN LATERAL (
        SELECT '' AS signature
        UNION ALL
        SELECT sk_signature_key(e.sk_error_signature) WHERE e.status IN (4, 5, 6)
    ) AS s
    GROUP BY 1, 2, 3;
    RETURN NULL;
END
$$;

-- A statement that writes its own record says so in its text: the marker
-- 'sk:records-itself' (post_new_job.sql, the lone post: the hot path a trigger
-- cost most, 13 % of a single post's rate against 3 % for a row added by the
-- statement itself; bench.record_cost). The triggers leave such a statement
-- alone. current_query() is the text the client sent, so a statement run
-- inside a function called by a marked one is left alone too: only a
-- statement that writes nothing through functions may carry the marker.
-- Without a client text (NULL: a background process) the triggers record.
CREATE OR REPLACE TRIGGER sk_record_on_insert
    AFTER INSERT ON sk_task_results_t
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT
    WHEN (coalesce(strpos(current_query(), 'sk:records-itself'), 0) = 0)
    EXECUTE FUNCTION sk_record_note_inserted();
CREATE OR REPLACE TRIGGER sk_record_on_update
    AFTER UPDATE ON sk_task_results_t
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT
    WHEN (coalesce(strpos(current_query(), 'sk:records-itself'), 0) = 0)
    EXECUTE FUNCTION sk_record_note_updated();
