-- A worker's liveness lock, held by its control session while it lives: the
-- two-key form with skconsole's own class id, so it never meets an
-- application's pg_advisory_lock(bigint).
SELECT pg_try_advisory_lock(%(lock_class)s, %(lock_key)s)
