-- The jobs the database says this worker runs (2 Processing, its owner id)
-- with their fencing tokens, all of them or those among %(ids)s: reconciled
-- against what the worker itself holds.
SELECT r.task_id, r.sk_claim_id AS claim_id
FROM sk_task_results_t r
WHERE r.task_status = 2 AND r.sk_owner_worker_id = %(worker_id)s
    AND (%(ids)s::uuid[] IS NULL OR r.task_id = ANY(%(ids)s::uuid[]))
