-- Tables of Stakhanovise.NET's queue layout in the schemas this session sees
-- (its search_path), whatever they are named: setup creates no second,
-- empty queue beside one of them (a forgotten or misread --mapping).
SELECT format('%I.%I', n.nspname, c.relname)
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY(current_schemas(false))
    AND (SELECT count(*) FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
             AND a.attname IN ('task_id', 'task_lock_handle_id', 'task_type',
                               'task_source', 'task_locked_until_ts')) = 5
ORDER BY 1
LIMIT 3
