-- The attempts this worker runs that an operator asked to cancel (ops_cancel.sql):
-- read when the worker's own channel says so, after (re)connecting, and every
-- few seconds in case a notification was lost.
SELECT r.task_id, r.sk_claim_id AS claim_id
FROM sk_task_results_t r
WHERE r.task_status = 2 AND r.sk_owner_worker_id = %(worker_id)s
    AND r.sk_cancel_requested_at_ts IS NOT NULL
