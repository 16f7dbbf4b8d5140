-- Release the lock index_build_lock.sql took.
SELECT pg_advisory_unlock(sk_index_build_lock_class(), hashtext(%(index)s)) AS released
