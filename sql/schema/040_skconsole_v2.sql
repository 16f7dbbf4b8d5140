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
-- Whether the worker's control session holds its liveness lock: false for a
-- worker behind a transaction pooler, whose server sessions are not its own
-- (its liveness is its lease alone).
ALTER TABLE sk_workers_t ADD COLUMN IF NOT EXISTS worker_session_lock boolean NOT NULL DEFAULT true;

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

-- Whether a worker's control session is connected, as far as this server can
-- tell from its liveness lock: NULL (unknown) when it cannot, on a standby (which
-- sees none of the primary's locks) or for a worker that holds no lock (behind a
-- transaction pooler). ``standby`` is pg_is_in_recovery(), read once per query.
CREATE OR REPLACE FUNCTION sk_worker_connected(session_lock boolean, lock_held boolean, standby boolean)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN session_lock AND NOT standby THEN lock_held END $$;

-- What is known of one worker's liveness, from its row and whether its control
-- session holds its liveness lock ("connected", NULL: unknown): how old its last lease
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
            WHEN stopped AND connected IS NOT TRUE THEN 'stopped'
            WHEN v.age > v.lease + v.margin THEN CASE WHEN connected THEN 'unresponsive' ELSE 'gone' END
            WHEN v.age > v.lease - v.margin THEN 'lease expiring'
            WHEN NOT connected THEN 'connection lost'
            ELSE 'alive'
        END,
        CASE
            WHEN stopped AND connected IS NOT TRUE THEN
                'stopped, last heartbeat ' || sk_seconds_text(v.age) || ' ago'
            WHEN v.age > v.lease + v.margin AND connected THEN
                'silent for ' || sk_seconds_text(v.age) || ', still connected'
            WHEN v.age > v.lease + v.margin AND connected IS NULL THEN
                'silent for ' || sk_seconds_text(v.age)
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
    SELECT w.worker_id, c.connected, w.worker_heartbeat_at_ts, v.heartbeat_age_s,
        v.lease_s, v.lease_lapsed, v.reapable_in_s, w.worker_stopped_at_ts IS NOT NULL, v.state, v.note
    FROM sk_workers_t w
    CROSS JOIN (SELECT pg_is_in_recovery() AS standby) s
    LEFT JOIN sk_held_worker_locks() h ON h.lock_key = w.worker_lock_key
    CROSS JOIN LATERAL (SELECT sk_worker_connected(w.worker_session_lock, h.lock_key IS NOT NULL, s.standby)
        AS connected) c
    CROSS JOIN LATERAL sk_liveness_verdict(w.worker_heartbeat_at_ts, w.worker_lease_seconds,
        w.worker_lease_margin_seconds, w.worker_stopped_at_ts IS NOT NULL, c.connected) v
$$;

-- sk_inflight_tasks(), the one definition of "hung" and of what an in-flight
-- job is doing, lives in 080_skconsole_cancel.sql (it reads that version's column).

