-- The jobs holding a type's concurrency slots (2 Processing), longest running
-- first, with the worker that runs each when it is registered. With a key path,
-- those holding one key's slots (key NULL: the jobs whose payload lacks the
-- path); without one (NULL) the key filter folds away. Reads the type's
-- in-flight rows only.
SELECT r.task_id, r.task_last_processing_attempted_at_ts AS started_at,
    extract(epoch FROM now() - r.task_last_processing_attempted_at_ts)::float8 AS running_s,
    w.worker_host AS host, w.worker_pid AS pid
FROM sk_task_results_t r
LEFT JOIN sk_workers_t w ON w.worker_id = r.sk_owner_worker_id
WHERE r.task_status = 2 AND r.task_type = %(task_type)s::text
    AND (%(key_path)s::text[] IS NULL
         OR sk_key(sk_try_jsonb(r.task_payload) #>> %(key_path)s::text[]) IS NOT DISTINCT FROM %(key)s::text)
ORDER BY r.task_last_processing_attempted_at_ts NULLS LAST, r.task_id
LIMIT %(limit)s
