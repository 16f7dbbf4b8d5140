-- skconsole's additive objects: how an ended attempt is recorded, written once.
-- A function only: every statement can run again and changes nothing.

-- Record attempts that just ended in sk_attempts_t (120_skconsole_attempts.sql)
-- and keep each job's newest sk_attempts_kept() of them. Called once per
-- statement, with the rows that statement ended as parallel arrays, by every
-- statement that ends an attempt: finish_success.sql, finish_failure.sql,
-- hand_back.sql, reap.sql and ops_cancel.sql (a gone worker's job). The caller decides which rows those are (its own
-- fenced UPDATE's RETURNING rows: still 2 Processing, under that worker and
-- claim) and what each one's outcome, new status and error are; this function
-- reads no result row.
--
-- Only a claim of ours is recorded (a worker and a fencing token known: an
-- unowned job's attempt is another consumer's, unnumbered). Who ran it is
-- copied from the worker's registration, if it still is registered; the end
-- is now(). An attempt recorded before (the same job and attempt number: a
-- write retried after its answer was lost) is overwritten with this ending.
-- The attempts past the newest sk_attempts_kept() of a job are deleted; the
-- array of such jobs is empty (and nothing read) until a job has had that many.
--
-- PL/pgSQL so that its two statements are planned once per session and run
-- as prepared; the caller's session settings hold here too (the finish
-- connection's: no sequential scan, no nested loop): the workers are looked up
-- by their key and joined by hash, the attempts by the primary key. Returns
-- how many attempts it recorded.
CREATE OR REPLACE FUNCTION sk_record_attempts(
    task_ids uuid[], attempts integer[], claim_ids bigint[], started_ats timestamptz[],
    worker_ids uuid[], outcomes text[], statuses integer[], errors text[])
RETURNS integer
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    recorded integer;
BEGIN
    INSERT INTO sk_attempts_t AS a (task_id, attempt, claim_id, started_at_ts, ended_at_ts,
        worker_id, worker_host, worker_pid, app_version, outcome, status, error)
    SELECT x.task_id, x.attempt, x.claim_id, x.started_at, now(), x.worker_id,
        w.worker_host, w.worker_pid, w.worker_app_version, x.outcome, x.status, x.error
    FROM unnest(task_ids, attempts, claim_ids, started_ats, worker_ids, outcomes, statuses, errors)
        AS x(task_id, attempt, claim_id, started_at, worker_id, outcome, status, error)
    LEFT JOIN (
        SELECT r.worker_id, r.worker_host, r.worker_pid, r.worker_app_version
        FROM sk_workers_t r WHERE r.worker_id = ANY(worker_ids)
    ) AS w ON w.worker_id = x.worker_id
    WHERE x.worker_id IS NOT NULL AND x.claim_id IS NOT NULL
    ON CONFLICT (task_id, attempt) DO UPDATE SET claim_id = EXCLUDED.claim_id,
        started_at_ts = EXCLUDED.started_at_ts, ended_at_ts = EXCLUDED.ended_at_ts,
        worker_id = EXCLUDED.worker_id, worker_host = EXCLUDED.worker_host,
        worker_pid = EXCLUDED.worker_pid, app_version = EXCLUDED.app_version,
        outcome = EXCLUDED.outcome, status = EXCLUDED.status, error = EXCLUDED.error;
    GET DIAGNOSTICS recorded = ROW_COUNT;

    DELETE FROM sk_attempts_t a USING unnest(task_ids, attempts) AS x(task_id, attempt)
    WHERE a.task_id = ANY(ARRAY(
            SELECT k.task_id FROM unnest(task_ids, attempts) AS k(task_id, attempt)
            WHERE k.attempt > sk_attempts_kept()))
        AND a.task_id = x.task_id AND a.attempt <= x.attempt - sk_attempts_kept();
    RETURN recorded;
END
$$;
