-- skconsole's additive objects: every attempt of a job, and the code version a
-- worker runs. Additive like 020-110: a table, an index and a nullable column;
-- every statement can run again and changes nothing.

-- The version of the application code a worker process runs (`skconsole worker
-- --app-version`, SKCONSOLE_APP_VERSION, or the installed distribution of its
-- tasks module; NULL when none is known), so "first seen in v1.8.3" is visible.
ALTER TABLE sk_workers_t ADD COLUMN IF NOT EXISTS worker_app_version varchar(100);

-- One row per attempt of ours that ended: written by the very statement that
-- records how it ended (finish_success.sql, finish_failure.sql, hand_back.sql,
-- reap.sql, each through sk_record_attempts(): 138_skconsole_attempt_record.sql),
-- never by a statement of its own, so the claim and the finish cost no extra
-- round trip. Keyed by the job and its attempt number (sk_attempt:
-- counted at each of our claims); bounded per job by the same statements (the
-- last sk_attempts_kept() attempts stay: see sk_attempts_kept); deleted with
-- the result row (ops_purge.sql, retention_purge.sql). Who ran it is copied
-- from the worker's registration at the time (the registration is forgotten
-- later). A Stakhanovise.NET consumer's attempts are not recorded: the result
-- row's first and last attempt times and last error are all that is known.
-- The error is the text stored on the result row for that attempt (capped the
-- same way: core/stored_error.py).
CREATE TABLE IF NOT EXISTS sk_attempts_t (
    task_id uuid NOT NULL,
    attempt integer NOT NULL,
    claim_id bigint,
    started_at_ts timestamptz,
    ended_at_ts timestamptz NOT NULL DEFAULT now(),
    worker_id uuid,
    worker_host varchar(250),
    worker_pid integer,
    app_version varchar(100),
    -- how it ended: succeeded, failed, handed_back, snoozed, reaped
    outcome varchar(20) NOT NULL,
    -- the job's status that attempt left it in (a JobStatus number)
    status integer NOT NULL,
    error text,
    CONSTRAINT pk_sk_attempts_t PRIMARY KEY (task_id, attempt)
);

-- How many attempts of one job are kept: the newest ones.
CREATE OR REPLACE FUNCTION sk_attempts_kept()
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 20 $$;
