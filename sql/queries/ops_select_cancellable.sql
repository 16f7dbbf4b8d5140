-- Operator selection for cancel: waiting jobs (as ops_select_queued.sql lists
-- them: sk_waiting_selection(), 140_skconsole_selection.sql) and, when 2 is
-- among the statuses, running ones that can be stopped: run by a skconsole
-- worker (told on its channel) or hung (its worker is gone: cancelled
-- directly), as sk_inflight_tasks() judges them. A job a worker without owner
-- data runs (Stakhanovise.NET) cannot be told, and is not selected. Note: who
-- runs it, or why it is hung.
SELECT s.* FROM (
    SELECT w.task_id, w.task_type, w.status, w.priority, w.error_count, w.at, w.note
    FROM sk_waiting_selection(%(statuses)s::integer[], %(ids)s::uuid[], %(task_type)s::text,
        %(signature)s::text, %(where_path)s::text[], %(where_value)s::text, %(where_rest)s::jsonb,
        %(cutoff)s::timestamptz) AS w
    UNION ALL
    SELECT i.task_id, i.task_type::text, 2, r.task_priority, i.task_error_count,
        i.attempt_started_at,
        coalesce('cancelled at once, its worker is gone: ' || i.hung_reason,
            'running on ' || i.worker_host || ' pid ' || i.worker_pid)
    FROM sk_inflight_tasks(%(unowned_s)s) i
    JOIN sk_task_results_t r ON r.task_id = i.task_id
    -- aged by its attempt's start; a running job without a signature is in no
    -- failure group (has_result false: not in "(no error text)")
    WHERE (i.worker_id IS NOT NULL OR i.hung_reason IS NOT NULL)
        AND sk_selected(i.task_id, 2, i.task_type, r.sk_error_signature, false, r.task_payload,
            i.attempt_started_at, %(statuses)s::integer[], %(ids)s::uuid[], %(task_type)s::text,
            %(signature)s::text, %(where_path)s::text[], %(where_value)s::text,
            %(where_rest)s::jsonb, %(cutoff)s::timestamptz)
) AS s
ORDER BY s.at, s.task_id
LIMIT %(limit)s
