-- skconsole's additive objects: limits per key of a task type (issue 25).
-- Every statement can run again and changes nothing.
--
-- A keyed type's jobs are told apart by the text at one payload path
-- (tt_key_path: sk_key(sk_try_jsonb(task_payload) #>> tt_key_path), a customer
-- id say; sk_key(), 122_skconsole_find.sql, bounds a big value to its digest,
-- so any size of key can be indexed and stored). tt_key_max_running: at most this many of its jobs in 2 Processing at
-- once per key, over all workers. tt_key_rate_count per tt_key_rate_seconds:
-- at most this many claims per key in a window of that length, each key with
-- a window of its own (sk_task_key_windows_t). A payload without the path, or
-- not JSON, has the missing key: all such jobs share one key, limited like the
-- others. tt_key_path is NULL exactly when the type has no per-key limit: the
-- claim (queries/claim.sql) tests it alone, and unlimited types pay nothing.
ALTER TABLE sk_task_types_t ADD COLUMN IF NOT EXISTS tt_key_path text[];
ALTER TABLE sk_task_types_t ADD COLUMN IF NOT EXISTS tt_key_max_running integer;
ALTER TABLE sk_task_types_t ADD COLUMN IF NOT EXISTS tt_key_rate_count integer;
ALTER TABLE sk_task_types_t ADD COLUMN IF NOT EXISTS tt_key_rate_seconds double precision;

-- The rate window of each key of a key-rate-limited type: it opens with the
-- first claim of the key after its last window ended and counts that key's
-- claims. The missing key is stored as key_missing = true with key '' (a
-- primary key column cannot be NULL, and '' is a key a payload may really
-- hold: the flag keeps the two apart). sk_claim_keyed() charges a window with
-- the jobs it chose of the key (a chosen job the claim then leaves is charged
-- too: the rate errs low, never high); it also deletes the type's ended windows, and clearing the
-- type's per-key limits deletes all of them, so the table holds at most one
-- row per key claimed within the last window.
CREATE TABLE IF NOT EXISTS sk_task_key_windows_t (
    task_type varchar(250) NOT NULL,
    key_missing boolean NOT NULL,
    key text NOT NULL,
    window_start_ts timestamptz NOT NULL,
    claims integer NOT NULL,
    PRIMARY KEY (task_type, key_missing, key)
);

-- What both statements below share, as WITH items: each key's running jobs
-- of the type (its in-flight result rows) and each key's claims in its rate
-- window still open. p_key is the key expression over "q" (a literal path).
CREATE OR REPLACE FUNCTION sk_claim_keyed_rooms_sql(p_type varchar, p_key text)
RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
    SELECT format($q$
        running AS (
            SELECT %1$s IS NULL AS missing, coalesce(%1$s, '') AS key, count(*) AS n
            FROM sk_task_results_t q
            WHERE q.task_status = 2 AND q.task_type = %2$L
            GROUP BY 1, 2
        ),
        charged AS (
            SELECT w.key_missing AS missing, w.key, w.claims
            FROM sk_task_key_windows_t w
            WHERE w.task_type = %2$L AND $4 IS NOT NULL
                AND w.window_start_ts + make_interval(secs => $4) > clock_timestamp()
        )$q$, p_key, p_type)
$fn$;

-- The statement sk_claim_keyed() runs for a type and its key path, built
-- with both as literals (format %L), so the planner sees the key index's exact
-- expression and proves its predicate (tests/db/test_key_limits.py EXPLAINs
-- it). Its parameters: $1 the most to take, $2 the concurrency per key, $3 and
-- $4 the rate per key (count, seconds); NULL: no such limit.
CREATE OR REPLACE FUNCTION sk_claim_keyed_statement(p_type varchar, p_path text[])
RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
    SELECT format($q$
        WITH RECURSIVE keys(key) AS (
            (SELECT %1$s FROM sk_tasks_queue_t q
             WHERE q.task_type = %2$L AND %1$s IS NOT NULL ORDER BY %1$s LIMIT 1)
            UNION ALL
            SELECT (SELECT %1$s FROM sk_tasks_queue_t q
                    WHERE q.task_type = %2$L AND %1$s > w.key ORDER BY %1$s LIMIT 1)
            FROM keys w WHERE w.key IS NOT NULL
        ),
        waiting(missing, key) AS (
            SELECT false, w.key FROM keys w WHERE w.key IS NOT NULL
            UNION ALL
            SELECT true, '' WHERE EXISTS (
                SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_type = %2$L AND %1$s IS NULL)
        ),
        %3$s,
        rooms AS (
            -- least() ignores NULL: a limit not set bounds nothing
            SELECT w.missing, w.key,
                least($1, $2 - coalesce(r.n, 0), $3 - coalesce(c.claims, 0))::integer AS room
            FROM waiting w
            LEFT JOIN running r ON r.missing = w.missing AND r.key = w.key
            LEFT JOIN charged c ON c.missing = w.missing AND c.key = w.key
        ),
        best AS (
            SELECT j.task_id
            FROM rooms w
            CROSS JOIN LATERAL (
                (SELECT q.task_id, q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id
                 FROM sk_tasks_queue_t q
                 WHERE NOT w.missing AND q.task_type = %2$L AND %1$s = w.key
                     AND q.task_locked_until_ts < now()
                 ORDER BY %1$s, q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id
                 LIMIT w.room)
                UNION ALL
                (SELECT q.task_id, q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id
                 FROM sk_tasks_queue_t q
                 WHERE w.missing AND q.task_type = %2$L AND %1$s IS NULL
                     AND q.task_locked_until_ts < now()
                 ORDER BY %1$s, q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id
                 LIMIT w.room)
            ) AS j
            WHERE w.room > 0
            ORDER BY j.task_priority, j.task_locked_until_ts, j.task_lock_handle_id
            LIMIT $1
        )
        SELECT q.task_id FROM sk_tasks_queue_t q
        WHERE q.task_id IN (SELECT b.task_id FROM best b)
            AND q.task_type = %2$L AND q.task_locked_until_ts < now()
        FOR UPDATE OF q SKIP LOCKED
    $q$, k.expr, p_type, sk_claim_keyed_rooms_sql(p_type, k.expr))
    FROM (SELECT format('sk_key(sk_try_jsonb(q.task_payload) #>> %L::text[])', p_path) AS expr) AS k
$fn$;

-- The first way sk_claim_keyed() looks for jobs, cheap when it works: the
-- type's head in claim order ($5 jobs of it, through the claim-order index),
-- and of those, each key's first up to its room. Its parameters are the other
-- statement's, plus $5, the most jobs to look at. It answers the jobs that fit
-- (best first, at most $1) and how many it looked at: when fewer than $1 fit
-- and it looked at all $5, a key at its limit may hold the head, and the claim
-- takes the loose scan above instead.
CREATE OR REPLACE FUNCTION sk_claim_keyed_walk_statement(p_type varchar, p_path text[])
RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
    SELECT format($q$
        WITH head AS MATERIALIZED (
            -- the type as a range, as in queries/claim.sql: only the claim-order index fits
            SELECT q.task_id, q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id,
                %1$s IS NULL AS missing, coalesce(%1$s, '') AS key
            FROM sk_tasks_queue_t q
            WHERE q.task_type >= %2$L AND q.task_type <= %2$L AND q.task_locked_until_ts < now()
            ORDER BY q.task_type, q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id
            LIMIT $5
        ),
        %3$s,
        fits AS (
            SELECT h.task_id
            FROM (
                SELECT h.*, row_number() OVER (PARTITION BY h.missing, h.key
                    ORDER BY h.task_priority, h.task_locked_until_ts, h.task_lock_handle_id) AS nth
                FROM head h
            ) AS h
            LEFT JOIN running r ON r.missing = h.missing AND r.key = h.key
            LEFT JOIN charged c ON c.missing = h.missing AND c.key = h.key
            -- least() ignores NULL: a limit not set bounds nothing
            WHERE h.nth <= least($1, $2 - coalesce(r.n, 0), $3 - coalesce(c.claims, 0))
            ORDER BY h.task_priority, h.task_locked_until_ts, h.task_lock_handle_id
            LIMIT $1
        )
        SELECT ARRAY(SELECT f.task_id FROM fits f), (SELECT count(*)::integer FROM head)
    $q$, k.expr, p_type, sk_claim_keyed_rooms_sql(p_type, k.expr))
    FROM (SELECT format('sk_key(sk_try_jsonb(q.task_payload) #>> %L::text[])', p_path) AS expr) AS k
$fn$;

-- The jobs a claim may take of a keyed type (at most p_want, already within
-- the type-wide room that sk_claim_room() gave), locked FOR UPDATE SKIP LOCKED,
-- best first in claim order. Like sk_claim_room() it locks the type's row
-- (the claim has already: sk_claim_room() runs first), so the claims of a
-- keyed type take turns, and it is VOLATILE so each query below sees the
-- claims that committed while this one waited for that lock.
--
-- Cost: first it looks at the head of the type's queue in claim order, a
-- few times p_want jobs (sk_claim_keyed_walk_statement): with many keys
-- spread through the queue, that finds p_want jobs of keys with room at once.
-- It never walks further skipping jobs (one customer's million jobs at the
-- head would make every claim read them): when the head did not give enough,
-- the distinct keys with queued jobs are enumerated by a loose index
-- scan over the type's key index (ops/key_index.py builds it: sk_key_<hash>, on
-- (key, priority, locked until, lock handle), partial on the type), each key
-- costing one index descent; keys at their limit are skipped; each other key
-- gives up to its room of due jobs from the head of its own part of the index;
-- the best p_want of those are locked. So a claim reads O(waiting keys + jobs
-- running of the type), whatever the backlog. Without the index (dropped, or
-- its build still running) the same query is correct and slower.
CREATE OR REPLACE FUNCTION sk_claim_keyed(p_type varchar, p_want integer)
RETURNS SETOF uuid LANGUAGE plpgsql VOLATILE ROWS 10 AS $$
DECLARE
    lim record;
    cand uuid[];
    seen integer;
    budget integer;
    chosen uuid[];
BEGIN
    IF p_want <= 0 THEN
        RETURN;
    END IF;
    SELECT tt_key_path, tt_key_max_running, tt_key_rate_count, tt_key_rate_seconds
    INTO lim FROM sk_task_types_t WHERE task_type = p_type FOR UPDATE;
    IF NOT FOUND OR lim.tt_key_path IS NULL THEN  -- cleared since the claim began
        RETURN QUERY
            SELECT q.task_id FROM sk_tasks_queue_t q
            WHERE q.task_type = p_type AND q.task_locked_until_ts < now()
            ORDER BY q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id
            LIMIT p_want
            FOR UPDATE SKIP LOCKED;
        RETURN;
    END IF;
    IF lim.tt_key_rate_count IS NOT NULL THEN
        DELETE FROM sk_task_key_windows_t w
        WHERE w.task_type = p_type
            AND w.window_start_ts + make_interval(secs => lim.tt_key_rate_seconds) <= clock_timestamp();
    END IF;
    budget := p_want * 4 + 40;
    EXECUTE sk_claim_keyed_walk_statement(p_type, lim.tt_key_path) INTO cand, seen
    USING p_want, lim.tt_key_max_running, lim.tt_key_rate_count, lim.tt_key_rate_seconds, budget;
    IF cardinality(cand) >= p_want OR seen < budget THEN
        -- the head held enough, or was the whole due queue: the walk's answer is exact
        SELECT array_agg(l.task_id) INTO chosen FROM (
            SELECT q.task_id FROM sk_tasks_queue_t q
            WHERE q.task_id = ANY(cand) AND q.task_type = p_type AND q.task_locked_until_ts < now()
            FOR UPDATE SKIP LOCKED
        ) AS l;
    ELSE
        EXECUTE 'SELECT array_agg(task_id) FROM ('
                || sk_claim_keyed_statement(p_type, lim.tt_key_path) || ') AS chosen'
        INTO chosen
        USING p_want, lim.tt_key_max_running, lim.tt_key_rate_count, lim.tt_key_rate_seconds;
    END IF;
    IF lim.tt_key_rate_count IS NULL OR chosen IS NULL THEN
        RETURN QUERY SELECT unnest(chosen);
        RETURN;
    END IF;
    -- each key's window is charged here with the jobs chosen of it, so the claim
    -- statement itself (which every type runs) carries no key-window write. A job
    -- chosen here that the claim then leaves (another type's jobs ranked first, or
    -- its result row was held) is charged all the same: the rate errs low, never high.
    INSERT INTO sk_task_key_windows_t AS w (task_type, key_missing, key, window_start_ts, claims)
    SELECT p_type, e.v IS NULL, coalesce(e.v, ''), clock_timestamp(), count(*)::integer
    FROM sk_tasks_queue_t q
    CROSS JOIN LATERAL (SELECT sk_key(sk_try_jsonb(q.task_payload) #>> lim.tt_key_path) AS v) AS e
    WHERE q.task_id = ANY(chosen)
    GROUP BY 2, 3
    ON CONFLICT (task_type, key_missing, key) DO UPDATE SET (window_start_ts, claims) = (
        SELECT CASE WHEN x.renew THEN clock_timestamp() ELSE w.window_start_ts END,
            CASE WHEN x.renew THEN 0 ELSE w.claims END + EXCLUDED.claims
        FROM (SELECT w.window_start_ts + make_interval(secs => lim.tt_key_rate_seconds)
            <= clock_timestamp() AS renew) AS x);
    RETURN QUERY SELECT unnest(chosen);
END
$$;
