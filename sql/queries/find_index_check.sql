-- The search index again at execution (see find_index_state.sql): a row only
-- while it still qualifies, so an index added or dropped meanwhile is left alone.
SELECT s.*
FROM (
    SELECT %(index)s::text AS index,
        (SELECT n.nspname::text FROM pg_namespace n WHERE n.oid = c.relnamespace) AS schema,
        i.oid IS NOT NULL AS index_exists,
        coalesce(x.indisvalid, false) AS valid,
        coalesce(r.rolsuper OR pg_has_role(c.relowner, 'USAGE'), false) AS may_index,
        t.oid IS NOT NULL AND CASE WHEN %(adding)s::boolean
            THEN i.oid IS NULL OR NOT x.indisvalid ELSE i.oid IS NOT NULL END AS eligible
    FROM (SELECT to_regclass(%(table)s) AS oid) t
    JOIN pg_roles r ON r.rolname = current_user
    LEFT JOIN pg_class c ON c.oid = t.oid
    LEFT JOIN pg_index x ON x.indrelid = t.oid
        AND x.indexrelid = (SELECT ic.oid FROM pg_class ic
                            WHERE ic.relname = %(index)s AND ic.relnamespace = c.relnamespace)
    LEFT JOIN pg_class i ON i.oid = x.indexrelid
) s
WHERE s.eligible
