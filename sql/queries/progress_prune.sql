-- Forget the progress of attempts that are over (the job finished, was handed
-- back or claimed again, or its row was purged): reads ignore those rows already.
DELETE FROM sk_task_progress_t p
WHERE NOT EXISTS (
    SELECT 1 FROM sk_task_results_t r
    WHERE r.task_id = p.task_id AND r.sk_claim_id = p.claim_id AND r.task_status = 2)
