-- Stakhanovise.NET's tables that carry storage settings (skconsole's setup put
-- autovacuum settings on the hot ones): they are reset to the server's.
SELECT c.oid::regclass::text
FROM pg_class c
WHERE c.oid IN (SELECT to_regclass(t) FROM unnest(%(theirs)s::text[]) AS t)
    AND c.reloptions IS NOT NULL
ORDER BY 1
