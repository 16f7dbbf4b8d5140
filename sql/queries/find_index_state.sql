-- One search index (skconsole find-index) as it is now: whether the results
-- table and the index exist, whether the index is valid (a CREATE INDEX
-- CONCURRENTLY that failed leaves an invalid one), its size, and whether this
-- role may create or drop it (the table's owner or a superuser). eligible:
-- adding, the index is missing, invalid or stale (an older version's, on the
-- unbounded value); dropping, it exists. Read again at
-- execution: an index added or dropped meanwhile is left alone (schema: where
-- the index lives, its table's).
SELECT %(index)s::text AS index,
    (SELECT n.nspname::text FROM pg_namespace n WHERE n.oid = c.relnamespace) AS schema,
    t.oid IS NOT NULL AS table_exists,
    i.oid IS NOT NULL AS index_exists,
    coalesce(x.indisvalid, false) AS valid,
    -- built by an older version, on the unbounded value: a big value fails posts
    coalesce(pg_get_indexdef(i.oid) NOT LIKE '%%sk_key(%%', false) AS stale,
    coalesce(pg_relation_size(i.oid), 0) AS index_bytes,
    pg_get_indexdef(i.oid) AS definition,
    coalesce(r.rolsuper OR pg_has_role(c.relowner, 'USAGE'), false) AS may_index,
    t.oid IS NOT NULL AND CASE WHEN %(adding)s::boolean
        THEN i.oid IS NULL OR NOT x.indisvalid OR pg_get_indexdef(i.oid) NOT LIKE '%%sk_key(%%'
        ELSE i.oid IS NOT NULL END AS eligible
FROM (SELECT to_regclass(%(table)s) AS oid) t
JOIN pg_roles r ON r.rolname = current_user
LEFT JOIN pg_class c ON c.oid = t.oid
LEFT JOIN pg_index x ON x.indrelid = t.oid
    AND x.indexrelid = (SELECT ic.oid FROM pg_class ic
                        WHERE ic.relname = %(index)s AND ic.relnamespace = c.relnamespace)
LEFT JOIN pg_class i ON i.oid = x.indexrelid
