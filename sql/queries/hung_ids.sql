-- The hung jobs a worker's reaper takes (reap.sql's selection), by id only:
-- when a reap statement fails on a row the server refuses, the reaper reaps
-- each of them alone, so one such job never keeps the others hung.
SELECT i.task_id
FROM sk_inflight_tasks(%(unowned_s)s) i
WHERE i.hung_reason IS NOT NULL
    AND (%(exclude_owner)s::uuid IS NULL OR i.worker_id IS DISTINCT FROM %(exclude_owner)s::uuid)
LIMIT %(limit)s
