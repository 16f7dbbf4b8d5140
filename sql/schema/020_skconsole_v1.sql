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
-- Finished rows by status and time (flow, execution times, history, retention).
-- Partial: a new job has no finalized time, so a post never enters it (schema 9;
-- ~9 % of a bulk post's time and 7 % of its WAL); every read of it bounds the time,
-- which implies the predicate. The full index of an older version is replaced.
DO $lean$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_index
               WHERE indexrelid = to_regclass('idx_sk_task_results_status_finalized')
                   AND indpred IS NULL) THEN
        DROP INDEX idx_sk_task_results_status_finalized;
    END IF;
END
$lean$;
CREATE INDEX IF NOT EXISTS idx_sk_task_results_status_finalized
    ON sk_task_results_t (task_status, task_processing_finalized_at_ts)
    WHERE task_processing_finalized_at_ts IS NOT NULL;

CREATE SEQUENCE IF NOT EXISTS sk_workers_lock_key_seq AS bigint START WITH 1;

-- One row per worker process: its registration and its lease (040 adds the
-- lease's length; what "alive" and "hung" mean is sk_worker_liveness() there).
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
