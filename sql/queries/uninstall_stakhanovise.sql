-- Stakhanovise.NET's own tables, only when asked (a queue skconsole set up alone).
SELECT c.oid::regclass::text
FROM unnest(%(theirs)s::text[]) WITH ORDINALITY AS t(name, n)
JOIN pg_class c ON c.oid = to_regclass(t.name)
WHERE %(stakhanovise)s
ORDER BY t.n
