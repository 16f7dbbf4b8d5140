-- The columns skconsole added to Stakhanovise.NET's tables (named sk_*: its own
-- are task_* and metric_*), as (table, column).
SELECT a.attrelid::regclass::text AS table_name, a.attname::text AS column_name
FROM pg_attribute a
WHERE a.attrelid IN (SELECT to_regclass(t) FROM unnest(%(theirs)s::text[]) AS t)
    AND a.attname LIKE 'sk\_%%' AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum
