-- skconsole's sequences present in this database (schema uninstall).
SELECT c.oid::regclass::text
FROM unnest(%(sequences)s::text[]) WITH ORDINALITY AS s(name, n)
JOIN pg_class c ON c.oid = to_regclass(s.name) AND c.relkind = 'S'
ORDER BY s.n
