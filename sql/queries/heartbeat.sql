-- Renew this worker's lease. No row: the registration is gone (deleted by
-- hand, or lost in a failover); the worker registers again. now() is the
-- statement's start: never later than the moment the worker sent it, which is
-- what its own clock counts from. With it, the timeline the database is on and
-- until when claims are held on it (sk_timeline_state(),
-- 134_skconsole_failover.sql): on another timeline than its last renewal's,
-- the worker checks what it holds before this renewal counts.
WITH renewed AS (
    UPDATE sk_workers_t SET worker_heartbeat_at_ts = now(), worker_stopped_at_ts = NULL
    WHERE worker_id = %(worker_id)s
    RETURNING worker_lock_key
)
SELECT r.worker_lock_key AS lock_key, s.timeline, s.held_until
FROM renewed r CROSS JOIN sk_timeline_state(%(hold_s)s) s
