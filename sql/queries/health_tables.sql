-- The hot tables' health, in the order asked (a table missing from the database is left out):
-- tuples, sizes, the last (auto)vacuum and (auto)analyze, its storage options (per-table
-- autovacuum settings), and the vacuum running on it now, if any (pg_stat_progress_vacuum;
-- without pg_read_all_stats, a vacuum run by another role is not matched to its table).
SELECT c.relname::text AS table,
    coalesce(s.n_live_tup, 0) AS live_rows,
    coalesce(s.n_dead_tup, 0) AS dead_rows,
    pg_table_size(c.oid) AS table_bytes,
    pg_indexes_size(c.oid) AS index_bytes,
    s.last_vacuum,
    s.last_autovacuum,
    s.last_analyze,
    s.last_autoanalyze,
    c.reloptions::text[] AS reloptions,
    v.phase AS vacuum_phase,
    v.backend_type AS vacuum_backend
FROM unnest(%(tables)s::text[]) WITH ORDINALITY AS t(name, n)
JOIN pg_class c ON c.oid = to_regclass(t.name)
LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
LEFT JOIN LATERAL (
    SELECT p.phase, a.backend_type
    FROM pg_stat_progress_vacuum p
    LEFT JOIN pg_stat_activity a ON a.pid = p.pid
    WHERE p.relid = c.oid
    LIMIT 1
) v ON true
ORDER BY t.n
