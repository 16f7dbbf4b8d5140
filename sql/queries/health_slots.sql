-- Replication slots that hold the horizon back: xmin (every table, with hot_standby_feedback)
-- and catalog_xmin (the system catalogs only: logical decoding). Readable by every role.
SELECT slot_name::text AS name,
    slot_type::text AS slot_type,
    database::text AS database,
    active,
    active_pid,
    age(xmin)::bigint AS xmin_age,
    age(catalog_xmin)::bigint AS catalog_xmin_age
FROM pg_replication_slots
WHERE xmin IS NOT NULL OR catalog_xmin IS NOT NULL
ORDER BY greatest(age(xmin), age(catalog_xmin)) DESC
