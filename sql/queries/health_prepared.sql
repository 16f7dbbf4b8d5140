-- Prepared transactions (two-phase commit) of this database: each holds the horizon and its
-- locks until COMMIT PREPARED or ROLLBACK PREPARED, whoever connects. Readable by every role.
SELECT gid,
    owner::text AS owner,
    prepared AS prepared_at,
    extract(epoch FROM now() - prepared)::float8 AS age_s,
    age(transaction)::bigint AS xid_age
FROM pg_prepared_xacts
WHERE database = current_database()
ORDER BY prepared
