-- The search indexes skconsole find-index made on the results table (named
-- sk_find_*), with what they index (their comment: the path and type, as JSON),
-- whether they are valid, their size and how often the planner used them.
SELECT i.relname::text AS index, obj_description(i.oid, 'pg_class') AS comment,
    x.indisvalid AS valid, pg_relation_size(i.oid) AS index_bytes,
    coalesce(s.idx_scan, 0) AS scans, pg_get_indexdef(i.oid) AS definition
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
LEFT JOIN pg_stat_user_indexes s ON s.indexrelid = i.oid
WHERE x.indrelid = to_regclass(%(table)s) AND i.relname LIKE 'sk\_find\_%%'
ORDER BY i.relname
