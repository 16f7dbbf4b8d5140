-- Operator selection over result rows (requeue, purge, edit previews): the jobs
-- in the given statuses matching every given filter, as sk_result_selection()
-- lists them (140_skconsole_selection.sql), oldest activity first.
SELECT s.task_id, s.task_type, s.status, s.priority, s.error_count, s.at, s.note
FROM sk_result_selection(%(statuses)s::integer[], %(ids)s::uuid[], %(task_type)s::text,
    %(signature)s::text, %(where_path)s::text[], %(where_value)s::text, %(where_rest)s::jsonb,
    %(cutoff)s::timestamptz) AS s
ORDER BY s.at, s.task_id
LIMIT %(limit)s
