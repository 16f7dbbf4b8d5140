-- Replication slots that hold the horizon back: xmin (every table, with hot_standby_feedback)
-- and catalog_xmin (the system catalogs only: logical decoding). Readable by every role.
SELECT slot_name::text,
    slot_type,
    database::text,
    active,
    active_pid,
    age(xmin)::bigint,
    age(catalog_xmin)::bigint
FROM pg_replication_slots
WHERE xmin IS NOT NULL OR catalog_xmin IS NOT NULL
ORDER BY greatest(age(xmin), age(catalog_xmin)) DESC
