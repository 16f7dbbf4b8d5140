-- Operator selection over waiting jobs (bump, cancel previews): queue rows and
-- fan-in jobs waiting for others, as sk_waiting_selection() lists them
-- (140_skconsole_selection.sql), oldest activity first.
SELECT s.task_id, s.task_type, s.status, s.priority, s.error_count, s.at, s.note
FROM sk_waiting_selection(%(statuses)s::integer[], %(ids)s::uuid[], %(task_type)s::text,
    %(signature)s::text, %(where_path)s::text[], %(where_value)s::text, %(where_rest)s::jsonb,
    %(cutoff)s::timestamptz) AS s
ORDER BY s.at, s.task_id
LIMIT %(limit)s
