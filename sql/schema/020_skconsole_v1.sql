-- skconsole's additive objects (schema version 1). Nothing here changes an
-- existing Stakhanovise column: new columns are nullable or defaulted, new
-- tables and indexes are ours alone.

-- Who ran the current attempt, and which attempt it is: the fence that makes a
-- late finisher of a reaped job change nothing.
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_owner_worker_id uuid;
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_attempt integer NOT NULL DEFAULT 0;
-- A keyed re-post that arrived while the job was running: run it again after.
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_rerun_requested boolean NOT NULL DEFAULT false;

-- The claim walks each type's queue head in claim order: with this index it
-- needs neither a sort nor fresh statistics (after a bulk load into an empty
-- queue, stale statistics otherwise pick a bitmap scan + sort of the backlog).
CREATE INDEX IF NOT EXISTS idx_sk_tasks_queue_type_claim_order
    ON sk_tasks_queue_t (task_type, task_priority, task_locked_until_ts, task_lock_handle_id);

-- In-flight jobs are few; this keeps the reaper and the in-flight view cheap
-- however many finished rows the table holds.
CREATE INDEX IF NOT EXISTS idx_sk_task_results_processing
    ON sk_task_results_t (task_last_processing_attempted_at_ts) WHERE task_status = 2;
-- Failure groups and retention both read finished/failed rows by time.
CREATE INDEX IF NOT EXISTS idx_sk_task_results_status_finalized
    ON sk_task_results_t (task_status, task_processing_finalized_at_ts);

CREATE SEQUENCE IF NOT EXISTS sk_workers_lock_key_seq AS bigint START WITH 1;

-- One row per worker process. The process holds a session advisory lock on
-- worker_lock_key for as long as it lives: a free lock means a dead worker.
CREATE TABLE IF NOT EXISTS sk_workers_t (
    worker_id uuid PRIMARY KEY,
    worker_lock_key bigint NOT NULL UNIQUE DEFAULT nextval('sk_workers_lock_key_seq'),
    worker_process_id varchar(250) NOT NULL,
    worker_host varchar(250) NOT NULL,
    worker_pid integer NOT NULL,
    worker_concurrency integer NOT NULL,
    worker_task_types varchar(250)[] NOT NULL,
    worker_started_at_ts timestamptz NOT NULL DEFAULT now(),
    worker_heartbeat_at_ts timestamptz NOT NULL DEFAULT now(),
    worker_stopped_at_ts timestamptz
);

-- Per task type settings the whole fleet must agree on: the timeout the
-- reaper judges by, retry policy for display, and the pause switch.
CREATE TABLE IF NOT EXISTS sk_task_types_t (
    task_type varchar(250) PRIMARY KEY,
    tt_timeout_seconds double precision,
    tt_max_attempts integer,
    tt_paused boolean NOT NULL DEFAULT false,
    tt_paused_at_ts timestamptz,
    tt_updated_at_ts timestamptz NOT NULL DEFAULT now()
);

-- Every operator action that changed something.
CREATE TABLE IF NOT EXISTS sk_audit_t (
    audit_id bigserial PRIMARY KEY,
    audit_at_ts timestamptz NOT NULL DEFAULT now(),
    audit_user varchar(250) NOT NULL,
    audit_host varchar(250) NOT NULL,
    audit_action varchar(50) NOT NULL,
    audit_selection jsonb NOT NULL,
    audit_count integer NOT NULL,
    audit_details jsonb
);

-- Delete-based queues bloat their sort index within a minute of sustained
-- load under default autovacuum; vacuum the hot tables early and unthrottled.
ALTER TABLE sk_tasks_queue_t SET (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_vacuum_cost_limit = 10000,
    autovacuum_analyze_scale_factor = 0.02
);
ALTER TABLE sk_task_results_t SET (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_vacuum_cost_limit = 10000
);
ALTER TABLE sk_workers_t SET (autovacuum_vacuum_scale_factor = 0.0, autovacuum_vacuum_threshold = 100);

-- Every job in 2 Processing with its owner's liveness and a hung verdict. The
-- reaper and the console judge by this one definition. A worker is alive
-- while the session advisory lock on its key is held: PostgreSQL frees it the
-- moment the process or its connection dies.
CREATE OR REPLACE FUNCTION sk_inflight_tasks(
    heartbeat_stale_seconds double precision,
    timeout_grace_seconds double precision,
    unowned_after_seconds double precision)
RETURNS TABLE (
    task_id uuid,
    task_type varchar,
    task_attempt integer,
    task_error_count integer,
    attempt_started_at timestamptz,
    worker_id uuid,
    worker_host varchar,
    worker_pid integer,
    worker_alive boolean,
    heartbeat_at timestamptz,
    timeout_seconds double precision,
    max_attempts integer,
    hung_reason text)
LANGUAGE sql STABLE
AS $$
    WITH held AS (
        SELECT (l.classid::bigint << 32) | l.objid::bigint AS lock_key
        FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    ),
    f AS (
        SELECT r.task_id, r.task_type, r.sk_attempt, r.task_error_count,
            r.task_last_processing_attempted_at_ts AS started,
            r.sk_owner_worker_id, w.worker_id AS known_worker, w.worker_host, w.worker_pid,
            (w.worker_id IS NOT NULL AND EXISTS (SELECT 1 FROM held WHERE held.lock_key = w.worker_lock_key))
                AS alive,
            w.worker_heartbeat_at_ts, t.tt_timeout_seconds, t.tt_max_attempts,
            extract(epoch FROM clock_timestamp() - r.task_last_processing_attempted_at_ts) AS running_s,
            extract(epoch FROM clock_timestamp() - w.worker_heartbeat_at_ts) AS heartbeat_age_s
        FROM sk_task_results_t r
        LEFT JOIN sk_workers_t w ON w.worker_id = r.sk_owner_worker_id
        LEFT JOIN sk_task_types_t t ON t.task_type = r.task_type
        WHERE r.task_status = 2
    )
    SELECT f.task_id, f.task_type, f.sk_attempt, f.task_error_count, f.started, f.sk_owner_worker_id,
        f.worker_host, f.worker_pid, f.alive, f.worker_heartbeat_at_ts, f.tt_timeout_seconds,
        f.tt_max_attempts,
        CASE
            WHEN f.sk_owner_worker_id IS NULL THEN
                CASE WHEN f.running_s > unowned_after_seconds THEN
                    format('no owner recorded; processing for more than %s s', round(unowned_after_seconds))
                END
            WHEN f.known_worker IS NULL THEN 'worker gone (no longer registered)'
            WHEN NOT f.alive THEN format('worker gone (%s pid %s)', f.worker_host, f.worker_pid)
            WHEN f.heartbeat_age_s > heartbeat_stale_seconds THEN
                format('worker heartbeat stale (%s s)', round(f.heartbeat_age_s::numeric))
            WHEN f.tt_timeout_seconds IS NOT NULL
                AND f.running_s > f.tt_timeout_seconds + timeout_grace_seconds THEN
                format('over the type''s timeout (%s s)', f.tt_timeout_seconds)
        END
    FROM f
$$;
