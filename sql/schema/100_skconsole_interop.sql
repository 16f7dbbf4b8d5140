-- skconsole's additive objects, schema version 7: living beside a
-- Stakhanovise.NET application on one database. Additive like 020-090: a
-- function and a trigger; every statement can run again and changes nothing.
-- (Errors in Stakhanovise.NET's QueuedTaskError shape, sk_task_error() and
-- sk_error_json(), are with the other error functions in 030.)

-- A claim that is not ours. A .NET consumer dequeues a job by moving its
-- result row to 2 Processing; it knows nothing of skconsole's claim columns,
-- which may still name the skconsole worker that ran (and handed back, or
-- failed) an earlier attempt. Judged by that worker's liveness, the job would
-- look hung the moment the worker stopped, be reaped while it runs, and an
-- earlier attempt's late writer would pass the fence. Every claim of ours
-- takes a new sk_claim_id; a move into 2 that keeps the old one is someone
-- else's claim, and it clears ours: the job is then unowned (judged only by
-- how long it has been processing, and reaped only when asked: see
-- sk_inflight_tasks()). The WHEN clause is all a claim of ours costs.
CREATE OR REPLACE FUNCTION sk_task_results_foreign_claim()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    NEW.sk_owner_worker_id := NULL;
    NEW.sk_claim_id := NULL;
    NEW.sk_cancel_requested_at_ts := NULL;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE TRIGGER sk_task_results_foreign_claim
    BEFORE UPDATE OF task_status ON sk_task_results_t
    FOR EACH ROW WHEN (NEW.task_status = 2 AND OLD.task_status <> 2
        AND NEW.sk_claim_id IS NOT DISTINCT FROM OLD.sk_claim_id)
    EXECUTE FUNCTION sk_task_results_foreign_claim();

-- Errors skconsole stored as plain text before schema 7, on jobs waiting in
-- the queue now: a .NET consumer that dequeues one deserialises the error as
-- a QueuedTaskError, and plain text stops its poller. (Jobs that go back to
-- the queue later, by requeue, edit or a keyed re-post, are converted then.)
UPDATE sk_task_results_t r
SET task_last_error = sk_error_as_json(r.task_last_error)
FROM sk_tasks_queue_t q
WHERE q.task_id = r.task_id AND r.task_last_error IS NOT NULL
    AND sk_error_json(r.task_last_error) IS NULL;

-- The periodic types each worker process schedules (NULL: a worker of schema
-- version 6 or older, which does not say). A schedule no live worker has is
-- no longer anyone's (removed from the code, or its workers are all gone):
-- the schedules view says so instead of "next run in ...", and check warns.
ALTER TABLE sk_workers_t ADD COLUMN IF NOT EXISTS worker_schedules varchar(250)[];
