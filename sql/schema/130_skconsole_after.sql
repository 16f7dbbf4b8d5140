-- skconsole's additive objects: fan-in, a job posted after= others. Additive
-- like 020-126: a table of its own, three columns on the results table and
-- three functions; every statement can run again and changes nothing.
--
-- A waiting fan-in job is a result row in 1 Unprocessed with NO queue row (so
-- neither skconsole's claim nor a Stakhanovise.NET consumer can take it) and
-- one edge per job it still waits for. It gets its queue row when every one of
-- them has succeeded (3 Processed); when one ends Fatal or Cancelled (or is
-- gone), it ends 7 Cancelled with a reason naming that job, and so do the jobs
-- that wait for it, unless it was posted with after_failure="run" (then a
-- failed parent counts as done).
--
-- Atomic on skconsole's finish path: finish_success.sql, finish_failure.sql
-- and ops_cancel.sql call sk_release_after() in the statement that ends the
-- parent. Two cases are left to the worker's upkeep sweep (after_sweep.sql,
-- every few seconds): a post that read a parent as unfinished while that
-- parent's finish (not yet committed) could not see the new edge, and a
-- parent finished by a Stakhanovise.NET consumer (skconsole's SQL never ran).

-- The edges of waiting jobs: deleted when the job is released or cancelled.
-- No foreign key: a purge or a finish never waits on this table.
CREATE TABLE IF NOT EXISTS sk_task_after_t (
    task_id uuid NOT NULL,
    after_id uuid NOT NULL,
    CONSTRAINT pk_sk_task_after_t PRIMARY KEY (task_id, after_id)
);
-- a finish asks "who waits for these jobs?": one probe per finished job
CREATE INDEX IF NOT EXISTS idx_sk_task_after_t_after_id ON sk_task_after_t (after_id);
-- The parent has succeeded: recorded on the edge by the statement that saw it
-- (its finish, a post that found it 3 Processed, the sweep, a purge or a
-- retention round deleting its row), so its success counts for the waiting
-- job whatever happens to its row afterwards: a succeeded parent purged
-- before its siblings end is not "gone".
ALTER TABLE sk_task_after_t ADD COLUMN IF NOT EXISTS after_succeeded boolean NOT NULL DEFAULT false;

-- every job it waited for (kept after its release: the job detail and why show it)
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_after_ids uuid[];
-- posted with after_failure="run": a parent that ended Fatal or Cancelled counts as done
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_after_failure_runs boolean;
-- when it may run once released: its run_at, or its post time plus its delay
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_after_run_at timestamptz;

-- Why a fan-in job was cancelled: the one line its stored error carries.
CREATE OR REPLACE FUNCTION sk_after_reason(after_id uuid, after_type text, after_status integer)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT 'cancelled: waited for job ' || left(after_id::text, 8)
        || coalesce(' (' || after_type || ')', '') || ', which '
        || CASE after_status WHEN 6 THEN 'ended Fatal' WHEN 7 THEN 'ended Cancelled'
                ELSE 'is gone' END
$$;

-- What a job waiting for p_after should do now, reading its parents' result
-- rows (p_succeeded: jobs known to have succeeded, counted so whatever the
-- snapshot shows or whether their row is still there: the caller's own, and
-- the edges marked after_succeeded). pending: parents neither succeeded
-- nor ended without success; reason: set when one ended Fatal or Cancelled or
-- is gone (neither a result row nor a queue row), naming the first by id.
-- A parent with a queue row and no result row (posted by hand) is pending.
CREATE OR REPLACE FUNCTION sk_after_verdict(p_after uuid[], p_succeeded uuid[],
    OUT pending integer, OUT reason text)
LANGUAGE sql STABLE
AS $$
    WITH s AS (
        SELECT x.after_id, p.task_type::text AS after_type,
            CASE WHEN x.after_id = ANY(p_succeeded) THEN 3 ELSE p.task_status END
                AS after_status,
            x.after_id <> ALL(p_succeeded) AND p.task_id IS NULL
                AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = x.after_id)
                AS gone
        FROM unnest(p_after) AS x(after_id)
        LEFT JOIN sk_task_results_t p ON p.task_id = x.after_id
    )
    SELECT count(*) FILTER (WHERE NOT s.gone
            AND (s.after_status IS NULL OR s.after_status NOT IN (3, 6, 7)))::integer,
        (array_agg(sk_after_reason(s.after_id, s.after_type, s.after_status)
            ORDER BY s.after_id) FILTER (WHERE s.gone OR s.after_status IN (6, 7)))[1]
    FROM s
$$;

-- Decide one waiting job (locking its result row: at once when the caller
-- already holds it): 1 released (its queue row inserted from its result row,
-- due at its run_at or now), 2 cancelled (a parent ended Fatal or Cancelled,
-- or is gone, and it does not run anyway), 0 nothing (a parent still pending,
-- or it no longer waits: then its stale edges go). p_succeeded: jobs the caller
-- has just moved to 3 Processed (see sk_after_verdict).
CREATE OR REPLACE FUNCTION sk_after_decide(p_waiter uuid, p_succeeded uuid[])
RETURNS integer
LANGUAGE plpgsql VOLATILE
AS $fn$
DECLARE
    w record;
    v record;
BEGIN
    SELECT r.task_id, r.task_type, r.task_source, r.task_payload, r.task_priority,
        r.sk_after_ids, coalesce(r.sk_after_failure_runs, false) AS runs, r.sk_after_run_at
    INTO w
    FROM sk_task_results_t r
    WHERE r.task_id = p_waiter AND r.task_status = 1
    FOR UPDATE;
    IF NOT FOUND OR EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = p_waiter) THEN
        -- no longer a waiting job (purged, or queued by other means): its edges
        -- are stale, and would be swept again and again
        DELETE FROM sk_task_after_t WHERE task_id = p_waiter;
        RETURN 0;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM sk_task_after_t e WHERE e.task_id = p_waiter) THEN
        RETURN 0;  -- decided by someone else since the caller read its edges
    END IF;
    v := sk_after_verdict(
        coalesce(w.sk_after_ids,
            ARRAY(SELECT e.after_id FROM sk_task_after_t e WHERE e.task_id = p_waiter)),
        p_succeeded || ARRAY(SELECT e.after_id FROM sk_task_after_t e
                             WHERE e.task_id = p_waiter AND e.after_succeeded));
    IF v.reason IS NOT NULL AND NOT w.runs THEN
        UPDATE sk_task_results_t SET
            task_status = 7,
            task_processing_finalized_at_ts = now(),
            task_last_error = sk_task_error('skconsole.JobCancelled', v.reason)
        WHERE task_id = p_waiter;
        DELETE FROM sk_task_after_t WHERE task_id = p_waiter;
        RETURN 2;
    END IF;
    IF v.pending = 0 THEN
        INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,
            task_priority, task_posted_at_ts, task_locked_until_ts)
        VALUES (w.task_id, w.task_type, w.task_source, w.task_payload,
            w.task_priority, now(), coalesce(w.sk_after_run_at, now()))
        ON CONFLICT (task_id) DO NOTHING;
        DELETE FROM sk_task_after_t WHERE task_id = p_waiter;
        RETURN 1;
    END IF;
    RETURN 0;
END
$fn$;

-- Release (or cancel) the jobs waiting for any of p_done, which have just
-- ended (p_succeeded: all of them succeeded, whatever this transaction's
-- snapshots show; else each one's status is read). VOLATILE plpgsql: each query
-- takes a fresh snapshot, so a waiter another finish has just released is seen
-- as such. First every waiter no one else holds is locked at once (SKIP
-- LOCKED, in task_id order) and decided: no waiting, and no subtransaction
-- however many jobs wait. Then each waiter someone else held is locked in
-- task_id order (no two callers deadlock on two waiters), each in a
-- subtransaction of its own: one held past the caller's lock_timeout (the
-- finish connection waits 200 ms) is left to the upkeep sweep, so a finish
-- never fails for it. A cancelled waiter's own waiters are decided next (the
-- cascade). Returns how many jobs it released or cancelled.
CREATE OR REPLACE FUNCTION sk_release_after(p_done uuid[], p_succeeded boolean)
RETURNS integer
LANGUAGE plpgsql VOLATILE
AS $fn$
DECLARE
    parents uuid[] := p_done;
    trusted uuid[] := CASE WHEN p_succeeded THEN p_done ELSE '{}'::uuid[] END;
    got uuid[];
    decided uuid[];
    outcomes integer[];
    waiter uuid;
    outcome integer;
    changed integer := 0;
    released integer := 0;
BEGIN
    -- a success, once seen, is kept on the edges (the parent's row may be purged)
    UPDATE sk_task_after_t e SET after_succeeded = true
    WHERE e.after_id = ANY(p_done) AND NOT e.after_succeeded
        AND (p_succeeded OR EXISTS (SELECT 1 FROM sk_task_results_t p
                                    WHERE p.task_id = e.after_id AND p.task_status = 3));
    WHILE cardinality(parents) > 0 LOOP
        decided := '{}';
        outcomes := '{}';
        SELECT coalesce(array_agg(x.task_id ORDER BY x.task_id), '{}') INTO got
        FROM (
            SELECT r.task_id FROM sk_task_results_t r
            WHERE r.task_id IN (
                SELECT e.task_id FROM sk_task_after_t e WHERE e.after_id = ANY(parents))
            ORDER BY r.task_id
            FOR UPDATE OF r SKIP LOCKED
        ) AS x;
        FOREACH waiter IN ARRAY got LOOP
            decided := decided || waiter;
            outcomes := outcomes || sk_after_decide(waiter, trusted);
        END LOOP;
        FOR waiter IN
            SELECT DISTINCT e.task_id FROM sk_task_after_t e
            WHERE e.after_id = ANY(parents)
                AND NOT EXISTS (SELECT 1 FROM unnest(got) AS g(id) WHERE g.id = e.task_id)
            ORDER BY e.task_id
        LOOP
            BEGIN
                outcome := sk_after_decide(waiter, trusted);
            EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
                outcome := 0;  -- held by someone else: the upkeep sweep decides it later
            END;
            decided := decided || waiter;
            outcomes := outcomes || outcome;
        END LOOP;
        -- the round's tally; the waiters it cancelled are the next round's parents
        parents := '{}';
        FOR i IN 1 .. cardinality(decided) LOOP
            IF outcomes[i] = 2 THEN
                parents := parents || decided[i];
            END IF;
            changed := changed + (outcomes[i] > 0)::integer;
            released := released + (outcomes[i] = 1)::integer;
        END LOOP;
    END LOOP;
    IF released > 0 THEN
        PERFORM pg_notify('sk_task_queue_item_added', '');
    END IF;
    RETURN changed;
END
$fn$;
