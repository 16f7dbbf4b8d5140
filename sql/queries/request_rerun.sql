-- A keyed re-post of a job that is running right now: remember to run it again
-- (with the new payload) once the current attempt ends.
UPDATE sk_task_results_t AS t
SET sk_rerun_requested = true, task_payload = d.task_payload, task_priority = d.task_priority
FROM unnest(%(ids)s::uuid[], %(payloads)s::text[], %(priorities)s::integer[])
    AS d(task_id, task_payload, task_priority)
WHERE t.task_id = d.task_id AND t.task_status = 2
RETURNING t.task_id
