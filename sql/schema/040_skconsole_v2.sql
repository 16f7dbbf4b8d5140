-- skconsole's additive objects, schema version 2: worker leases, fencing
-- tokens, and the one definition of "alive" and "hung". Additive like 020 and
-- 030: new nullable columns, sequences, functions; every statement can run
-- again over a complete schema and changes nothing.

-- Advisory locks: skconsole uses the two-key form pg_try_advisory_lock(int4, int4)
-- with this class id of its own, so its keys never meet an application's own
-- pg_advisory_lock(bigint) keys (skconsole.db.schema.LOCK_CLASS is the same number).
CREATE OR REPLACE FUNCTION sk_lock_class()
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1936419947 $$;  -- 'sklk'; key 0 serialises schema setups, workers use 1..2^31-1

-- Worker lock keys are the second key of the two-key form: they must fit an integer.
ALTER SEQUENCE sk_workers_lock_key_seq AS integer MAXVALUE 2147483647 CYCLE;

-- The lease a worker runs under. It renews the lease (worker_heartbeat_at_ts)
-- every second on a connection of its own; if it cannot renew it for
-- lease - margin seconds it stops its own running jobs (self-fencing), and
-- others may reap its jobs only once lease + margin seconds have passed since
-- the last renewal, so two executions of a job never overlap. NULL: a worker
-- of schema version 1, which does not fence itself; it is judged by a 30 s lease.
ALTER TABLE sk_workers_t ADD COLUMN IF NOT EXISTS worker_lease_seconds double precision;
ALTER TABLE sk_workers_t ADD COLUMN IF NOT EXISTS worker_lease_margin_seconds double precision;

-- The fencing token of the current attempt: a new value from this sequence at
-- every claim. Finishing, failing or handing back a job changes its row only
-- if the token still matches, so a late writer of an earlier attempt changes
-- nothing. Unlike sk_attempt (a per-row counter that a purge and re-post
-- starts again), it never repeats.
CREATE SEQUENCE IF NOT EXISTS sk_claim_id_seq AS bigint;
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_claim_id bigint;

-- "1.5 s", "12.3 s", "381 s": how the liveness notes below write a duration
-- (cut, not rounded, so "no heartbeat for 12.0 s" never overstates a silence).
CREATE OR REPLACE FUNCTION sk_seconds_text(seconds double precision)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN seconds IS NULL THEN '?'
                WHEN abs(seconds) < 100 THEN trunc(seconds::numeric, 1)::text || ' s'
                ELSE trunc(seconds::numeric)::text || ' s' END
$$;

-- The keys of the worker liveness locks held right now (in this database).
CREATE OR REPLACE FUNCTION sk_held_worker_locks()
RETURNS TABLE (lock_key bigint)
LANGUAGE sql STABLE
AS $$
    SELECT DISTINCT l.objid::bigint
    FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.granted
        AND l.classid = sk_lock_class()::oid
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
$$;

-- What is known of one worker's liveness, from its row and whether its control
-- session holds its liveness lock ("connected"): how old its last lease
-- renewal is, and whether its lease has lapsed (only then may its jobs be
-- reaped). A free lock alone proves nothing about the process: a connection
-- blip frees it too, and a worker cut off by a partition may still hold it on
-- the server. Times are judged by now(), the statement's start, which is never
-- later than its snapshot: a renewal the statement cannot see committed after
-- now(), so the worker it came from had not yet fenced itself. A worker of
-- schema version 1 (no lease recorded, and no self-fencing) is judged by a 30 s lease.
-- (One row. Declared as a table so that the planner inlines it into the
-- queries that use it, rather than calling it once per in-flight job.)
DROP FUNCTION IF EXISTS sk_worker_liveness();
DROP FUNCTION IF EXISTS sk_liveness_verdict(timestamptz, double precision, double precision, boolean, boolean);
CREATE OR REPLACE FUNCTION sk_liveness_verdict(
    heartbeat_at timestamptz,
    lease_seconds double precision,
    margin_seconds double precision,
    stopped boolean,
    connected boolean)
RETURNS TABLE (
    heartbeat_age_s double precision,
    lease_s double precision,
    lease_lapsed boolean,
    reapable_in_s double precision,
    state text,
    note text)
LANGUAGE sql STABLE
AS $$
    SELECT v.age, v.lease, v.age > v.lease + v.margin, greatest(v.lease + v.margin - v.age, 0.0),
        CASE
            WHEN stopped AND NOT connected THEN 'stopped'
            WHEN v.age > v.lease + v.margin THEN CASE WHEN connected THEN 'unresponsive' ELSE 'gone' END
            WHEN v.age > v.lease - v.margin THEN 'lease expiring'
            WHEN NOT connected THEN 'connection lost'
            ELSE 'alive'
        END,
        CASE
            WHEN stopped AND NOT connected THEN
                'stopped, last heartbeat ' || sk_seconds_text(v.age) || ' ago'
            WHEN v.age > v.lease + v.margin AND connected THEN
                'silent for ' || sk_seconds_text(v.age) || ', still connected'
            WHEN v.age > v.lease + v.margin THEN
                'silent for ' || sk_seconds_text(v.age) || ', no connection'
            WHEN v.age > v.lease - v.margin THEN
                'silent for ' || sk_seconds_text(v.age) || '; reapable in '
                || sk_seconds_text(v.lease + v.margin - v.age)
            WHEN NOT connected THEN
                'control connection lost, heartbeat ' || sk_seconds_text(v.age) || ' ago'
            ELSE 'heartbeat ' || sk_seconds_text(v.age) || ' ago'
        END
    FROM (SELECT extract(epoch FROM now() - heartbeat_at)::double precision AS age,
                 coalesce(lease_seconds, 30.0) AS lease,
                 coalesce(margin_seconds, 0.0) AS margin) AS v
$$;

-- Every registered worker with its liveness (sk_liveness_verdict).
CREATE OR REPLACE FUNCTION sk_worker_liveness()
RETURNS TABLE (
    worker_id uuid,
    connected boolean,
    heartbeat_at timestamptz,
    heartbeat_age_s double precision,
    lease_s double precision,
    lease_lapsed boolean,
    reapable_in_s double precision,
    stopped boolean,
    state text,
    note text)
LANGUAGE sql STABLE
AS $$
    SELECT w.worker_id, h.lock_key IS NOT NULL, w.worker_heartbeat_at_ts, v.heartbeat_age_s,
        v.lease_s, v.lease_lapsed, v.reapable_in_s, w.worker_stopped_at_ts IS NOT NULL, v.state, v.note
    FROM sk_workers_t w
    LEFT JOIN sk_held_worker_locks() h ON h.lock_key = w.worker_lock_key
    CROSS JOIN LATERAL sk_liveness_verdict(w.worker_heartbeat_at_ts, w.worker_lease_seconds,
        w.worker_lease_margin_seconds, w.worker_stopped_at_ts IS NOT NULL, h.lock_key IS NOT NULL) v
$$;

-- Every job in 2 Processing with its owner's liveness and the one verdict of
-- "hung" that the automatic reaper, the operator's reap and the console all
-- use. A job is hung when its owner's lease has lapsed (the owner has stopped
-- it, or is dead), when its owner is not registered at all, or, with no owner
-- recorded (a Stakhanovise.NET worker runs it), when it has been processing
-- for longer than unowned_after_seconds. A job over its type's timeout whose
-- worker is alive is not hung: the worker enforces timeouts itself, and a sync
-- handler it cannot interrupt keeps the job until it returns.
DROP FUNCTION IF EXISTS sk_inflight_tasks(double precision, double precision, double precision);
CREATE OR REPLACE FUNCTION sk_inflight_tasks(unowned_after_seconds double precision)
RETURNS TABLE (
    task_id uuid,
    task_type varchar,
    task_attempt integer,
    claim_id bigint,
    task_error_count integer,
    attempt_started_at timestamptz,
    worker_id uuid,
    worker_host varchar,
    worker_pid integer,
    worker_connected boolean,
    heartbeat_at timestamptz,
    heartbeat_age_s double precision,
    reapable_in_s double precision,
    timeout_seconds double precision,
    max_attempts integer,
    state text,
    note text,
    hung_reason text)
LANGUAGE sql STABLE
AS $$
    WITH f AS (
        -- the owner's row joined once, by its key: the liveness verdict is computed
        -- from it (a join to sk_worker_liveness() would scan the workers per job)
        SELECT r.task_id, r.task_type, r.sk_attempt, r.sk_claim_id, r.task_error_count,
            r.task_last_processing_attempted_at_ts AS started, r.sk_owner_worker_id,
            w.worker_id AS known_worker, w.worker_host, w.worker_pid,
            h.lock_key IS NOT NULL AS connected, w.worker_heartbeat_at_ts AS heartbeat_at,
            l.heartbeat_age_s, l.reapable_in_s, l.lease_lapsed,
            w.worker_stopped_at_ts IS NOT NULL AS stopped, l.state AS worker_state, l.note AS worker_note,
            t.tt_timeout_seconds, t.tt_max_attempts,
            extract(epoch FROM now() - r.task_last_processing_attempted_at_ts)::double precision
                AS running_s
        FROM sk_task_results_t r
        LEFT JOIN sk_workers_t w ON w.worker_id = r.sk_owner_worker_id
        LEFT JOIN sk_held_worker_locks() h ON h.lock_key = w.worker_lock_key
        LEFT JOIN LATERAL sk_liveness_verdict(w.worker_heartbeat_at_ts, w.worker_lease_seconds,
            w.worker_lease_margin_seconds, w.worker_stopped_at_ts IS NOT NULL, h.lock_key IS NOT NULL) l
            ON w.worker_id IS NOT NULL
        LEFT JOIN sk_task_types_t t ON t.task_type = r.task_type
        WHERE r.task_status = 2
    ),
    v AS (
        SELECT f.*,
            CASE
                WHEN f.sk_owner_worker_id IS NULL THEN
                    CASE WHEN f.running_s > unowned_after_seconds THEN
                        format('no owner recorded; processing for more than %s s',
                            round(unowned_after_seconds::numeric))
                    END
                WHEN f.known_worker IS NULL THEN 'worker gone (no longer registered)'
                WHEN f.lease_lapsed AND f.stopped AND NOT f.connected THEN
                    format('worker stopped (%s pid %s) while the job ran; no heartbeat for %s',
                        f.worker_host, f.worker_pid, sk_seconds_text(f.heartbeat_age_s))
                WHEN f.lease_lapsed AND f.connected THEN
                    format('worker unresponsive (%s pid %s): no heartbeat for %s, connection still open',
                        f.worker_host, f.worker_pid, sk_seconds_text(f.heartbeat_age_s))
                WHEN f.lease_lapsed THEN
                    format('worker gone (%s pid %s): no heartbeat for %s',
                        f.worker_host, f.worker_pid, sk_seconds_text(f.heartbeat_age_s))
            END AS hung_reason,
            f.tt_timeout_seconds IS NOT NULL AND f.running_s > f.tt_timeout_seconds AS over_timeout
        FROM f
    )
    SELECT v.task_id, v.task_type, v.sk_attempt, v.sk_claim_id, v.task_error_count, v.started,
        v.sk_owner_worker_id, v.worker_host, v.worker_pid, v.connected, v.heartbeat_at,
        v.heartbeat_age_s, v.reapable_in_s, v.tt_timeout_seconds, v.tt_max_attempts,
        CASE
            WHEN v.hung_reason IS NOT NULL THEN 'hung'
            WHEN v.sk_owner_worker_id IS NULL THEN 'running (no owner recorded)'
            WHEN v.worker_state = 'alive' AND v.over_timeout THEN 'timed out, still running'
            WHEN v.worker_state = 'alive' THEN 'running'
            ELSE v.worker_state
        END,
        -- what is known in a few words (the worker's host and pid are shown beside it)
        CASE
            WHEN v.sk_owner_worker_id IS NULL AND v.hung_reason IS NOT NULL THEN v.hung_reason
            WHEN v.sk_owner_worker_id IS NULL THEN
                format('hung after %s s without an owner', round(unowned_after_seconds::numeric))
            WHEN v.known_worker IS NULL THEN 'worker no longer registered'
            WHEN v.worker_state = 'alive' AND v.over_timeout THEN
                format('timed out %s ago, still running',
                    sk_seconds_text(v.running_s - v.tt_timeout_seconds))
            ELSE v.worker_note
        END,
        v.hung_reason
    FROM v
$$;
