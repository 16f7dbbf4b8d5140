-- The indexes skconsole made on Stakhanovise.NET's tables: every index there
-- that is neither one of .NET's own (by the names its setup gives them) nor
-- behind a constraint.
SELECT i.indexrelid::regclass::text
FROM pg_index i
WHERE i.indrelid IN (SELECT to_regclass(t) FROM unnest(%(theirs)s::text[]) AS t)
    AND i.indexrelid NOT IN (
        SELECT to_regclass(n) FROM unnest(%(their_indexes)s::text[]) AS n
        WHERE to_regclass(n) IS NOT NULL)
    AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
ORDER BY 1
