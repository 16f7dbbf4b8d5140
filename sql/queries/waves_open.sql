-- The plans a process may advance now (open), oldest first: what a worker's upkeep
-- looks for every few seconds (idx_sk_wave_plans_t_open).
SELECT plan_id FROM sk_wave_plans_t
WHERE state IN ('running', 'waiting-for-wave')
ORDER BY plan_id
LIMIT %(limit)s
