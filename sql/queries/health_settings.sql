-- The server's settings that decide when autovacuum runs (a table's storage options override some).
SELECT name, setting
FROM pg_settings
WHERE name = ANY(%(names)s::text[])
