-- Claim up to %(limit)s eligible jobs of the worker's types in one statement:
-- delete their queue rows and mark their result rows 2 Processing, owned by
-- this worker, for a new attempt with a new fencing token (sk_claim_id).
-- Paused types are skipped. A queue row whose
-- result row is missing (posted by hand) gets one, so nothing runs untracked.
-- Limits (sql/schema/060_skconsole_limits.sql): a type with a concurrency or
-- rate limit takes at most sk_claim_room() jobs, which locks the type's row
-- until this claim commits; the claim then charges the type's rate window
-- with what it took. Types without limits call nothing and lock nothing.
-- Limits per key (sql/schema/128_skconsole_key_limits.sql): a keyed type
-- (tt_key_path set) is locked the same way, then sk_claim_keyed() chooses
-- and locks its jobs, within the type's room and each key's, and charges the
-- rate windows of their keys (there, not here: a write in this statement would
-- cost every claim, keyed or not, about 0.4 ms to set up).
-- A claim never waits for a row another transaction holds: queue rows and
-- result rows alike are taken with SKIP LOCKED (a job whose result row an
-- application's transaction or an operator's action holds is left for a later
-- claim). Waiting there while holding a limited type's row would hold up
-- every other worker's claim of that type, and so every type they run.
-- Each job comes with the trace context it was posted under (NULL outside a
-- trace: 132_skconsole_trace.sql), for the worker's tracing middleware.
-- A type with a circuit breaker open or half-open (tt_breaker_held,
-- 150_skconsole_breakers.sql) leaves the jobs the breaker holds back
-- (sk_breaker_holds(): asked only of such a type's rows); a keyed type's held
-- jobs chosen by sk_claim_keyed() stay locked, unclaimed, until this commits.
-- After a failover, nothing is claimed until every execution the old primary
-- handed out has stopped (sk_claim_gate(), 134_skconsole_failover.sql: NULL
-- while held), and each fencing token carries the timeline it was given on.
WITH gate AS MATERIALIZED (
    SELECT sk_claim_gate(%(hold_s)s) AS base
),
kinds AS (
    -- limited types are locked in name order (the sorted subquery), so two
    -- claims locking several types never deadlock
    SELECT k.name, k.rated, k.keyed, k.held,
        CASE WHEN k.limited THEN sk_claim_room(k.name, %(limit)s) ELSE %(limit)s END AS room
    FROM (
        SELECT t.name,
            (p.tt_max_running IS NOT NULL OR p.tt_rate_count IS NOT NULL
             OR p.tt_key_path IS NOT NULL) AS limited,
            (p.tt_rate_count IS NOT NULL) AS rated,
            (p.tt_key_path IS NOT NULL) AS keyed,
            coalesce(p.tt_breaker_held, false) AS held
        FROM unnest(%(types)s::varchar[]) AS t(name)
        LEFT JOIN sk_task_types_t p ON p.task_type = t.name
        WHERE NOT coalesce(p.tt_paused, false) AND (SELECT base FROM gate) IS NOT NULL
        ORDER BY t.name
        OFFSET 0
    ) AS k
),
picked AS (
    -- per type, the head of that type's queue in claim order (an index walk
    -- that needs no table statistics to stay cheap), then the best of those.
    -- The type is matched as a range, not with "=": an equality makes the
    -- planner drop task_type from the ORDER BY, and with one type holding the
    -- backlog it then walks Stakhanovise's (priority, ...) index for each of
    -- the other types, through every row, finding nothing: 2.8 ms a type, 560
    -- ms a claim for a worker of 200 types. As a range it keeps the type in
    -- the order, which only the type-led claim-order index gives.
    -- Keyed types' jobs come from sk_claim_keyed(), already locked (those the
    -- LIMIT below leaves out stay locked until this claim commits: the type's
    -- other claims wait for its row meanwhile, so none is kept from them).
    SELECT c.task_id
    FROM (
        SELECT h.task_id, h.task_priority, h.task_locked_until_ts, h.task_lock_handle_id
        FROM kinds AS t
        CROSS JOIN LATERAL (
            SELECT q.task_id, q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id
            FROM sk_tasks_queue_t q
            WHERE q.task_type >= t.name AND q.task_type <= t.name AND q.task_locked_until_ts < now()
                AND (NOT t.held OR NOT sk_breaker_holds(q.task_type, q.task_id, q.task_payload))
            -- task_type leads (it is fixed here) so only the claim-order index fits
            ORDER BY q.task_type, q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id
            LIMIT t.room
            FOR UPDATE SKIP LOCKED
        ) AS h
        WHERE t.room > 0 AND NOT t.keyed
        UNION ALL
        SELECT q.task_id, q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id
        FROM kinds AS t
        CROSS JOIN LATERAL sk_claim_keyed(t.name, t.room) AS k(task_id)
        JOIN sk_tasks_queue_t q ON q.task_id = k.task_id
        WHERE t.room > 0 AND t.keyed
            AND (NOT t.held OR NOT sk_breaker_holds(q.task_type, q.task_id, q.task_payload))
    ) AS c
    ORDER BY c.task_priority, c.task_locked_until_ts, c.task_lock_handle_id
    LIMIT %(limit)s
),
held AS MATERIALIZED (
    -- the result rows of the picked jobs, locked here so the upsert below never
    -- waits: one another transaction holds is skipped with its job
    SELECT r.task_id
    FROM sk_task_results_t r
    WHERE r.task_id IN (SELECT task_id FROM picked)
    FOR UPDATE OF r SKIP LOCKED
),
claimed AS (
    DELETE FROM sk_tasks_queue_t q USING picked p
    WHERE q.task_id = p.task_id
        AND (p.task_id IN (SELECT task_id FROM held)
             -- a queue row posted by hand, without a result row: the upsert makes one
             OR NOT EXISTS (SELECT 1 FROM sk_task_results_t x WHERE x.task_id = p.task_id))
    RETURNING q.*
),
charged AS (
    -- the rate window of each rate-limited type this claim took jobs of: a new
    -- window opens when the last one has ended (as sk_claim_room() decided,
    -- or since then: later only), and counts the jobs taken. The row is the
    -- one sk_claim_room() locked: its SET reads that newest version.
    UPDATE sk_task_types_t AS tt SET (tt_window_start_ts, tt_window_claims) = (
        SELECT CASE WHEN x.renew THEN clock_timestamp() ELSE tt.tt_window_start_ts END,
            CASE WHEN x.renew THEN 0 ELSE tt.tt_window_claims END + w.claims
        FROM (SELECT tt.tt_window_start_ts IS NULL OR tt.tt_window_start_ts
            + make_interval(secs => tt.tt_rate_seconds) <= clock_timestamp() AS renew) AS x)
    FROM (
        -- driven by the rate-limited types (usually none): one pass over kinds
        SELECT k.name, (SELECT count(*)::integer FROM claimed c WHERE c.task_type = k.name) AS claims
        FROM kinds k WHERE k.rated
    ) AS w
    WHERE tt.task_type = w.name AND w.claims > 0
),
started AS (
    INSERT INTO sk_task_results_t AS r (
        task_id, task_type, task_source, task_payload, task_status, task_priority,
        task_error_count, task_last_error_is_recoverable, task_processing_time_milliseconds,
        task_posted_at_ts, task_first_processing_attempted_at_ts,
        task_last_processing_attempted_at_ts, sk_owner_worker_id, sk_attempt, sk_claim_id,
        sk_due_at_ts)
    SELECT c.task_id, c.task_type, c.task_source, c.task_payload, 2, c.task_priority,
        0, false, 0, c.task_posted_at_ts, clock_timestamp(), clock_timestamp(), %(worker_id)s, 1,
        (SELECT base FROM gate) + nextval('sk_claim_id_seq'), c.task_locked_until_ts
    FROM claimed c
    ON CONFLICT (task_id) DO UPDATE SET
        task_status = 2,
        task_first_processing_attempted_at_ts =
            coalesce(r.task_first_processing_attempted_at_ts, EXCLUDED.task_first_processing_attempted_at_ts),
        task_last_processing_attempted_at_ts = EXCLUDED.task_last_processing_attempted_at_ts,
        sk_owner_worker_id = EXCLUDED.sk_owner_worker_id,
        sk_attempt = r.sk_attempt + 1,
        sk_claim_id = EXCLUDED.sk_claim_id,
        -- when it became due: how long it waited, for the record (146_skconsole_record.sql)
        sk_due_at_ts = EXCLUDED.sk_due_at_ts,
        -- a cancel request concerns the attempt it was made for
        sk_cancel_requested_at_ts = NULL
    RETURNING r.task_id, r.sk_attempt, r.sk_claim_id, r.task_error_count, r.sk_trace_context
)
SELECT c.task_id, c.task_type, c.task_source AS source, c.task_payload AS payload,
    c.task_priority AS priority, c.task_posted_at_ts AS posted_at, s.sk_attempt AS attempt,
    s.sk_claim_id AS claim_id, s.task_error_count AS error_count,
    s.sk_trace_context AS trace_context
FROM claimed c JOIN started s ON s.task_id = c.task_id
ORDER BY c.task_priority, c.task_locked_until_ts, c.task_lock_handle_id
