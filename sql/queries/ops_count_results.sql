-- How many result rows an operator selection matches (see ops_select_results.sql).
SELECT count(*) AS n
FROM sk_result_selection(%(statuses)s::integer[], %(ids)s::uuid[], %(task_type)s::text,
    %(signature)s::text, %(where_path)s::text[], %(where_value)s::text, %(where_rest)s::jsonb,
    %(cutoff)s::timestamptz)
