-- Prepared transactions (two-phase commit) of this database: each holds the horizon and its
-- locks until COMMIT PREPARED or ROLLBACK PREPARED, whoever connects. Readable by every role.
SELECT gid,
    owner::text,
    prepared,
    extract(epoch FROM now() - prepared)::float8,
    age(transaction)::bigint
FROM pg_prepared_xacts
WHERE database = current_database()
ORDER BY prepared
