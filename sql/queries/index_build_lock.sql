-- Take, for this session, the lock on building one index (find-index add, a
-- per-key limit's key index): false when another session builds it now.
SELECT pg_try_advisory_lock(sk_index_build_lock_class(), hashtext(%(index)s)) AS taken
