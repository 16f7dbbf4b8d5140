-- skconsole's own tables present in this database (schema uninstall).
SELECT c.oid::regclass::text
FROM unnest(%(ours)s::text[]) WITH ORDINALITY AS t(name, n)
JOIN pg_class c ON c.oid = to_regclass(t.name)
ORDER BY t.n
