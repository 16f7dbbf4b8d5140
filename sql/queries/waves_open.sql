-- The plans a worker may advance now, oldest first (idx_sk_wave_plans_t_open): those
-- requeuing a wave, and those waiting for one whose jobs nobody looked at for
-- %(every_s)s seconds (waves_checked.sql), so a fleet of workers reads a wave's jobs
-- about once per interval, not once per worker.
SELECT plan_id FROM sk_wave_plans_t
WHERE state IN ('running', 'waiting-for-wave')
    AND (state = 'running' OR checked_at_ts IS NULL
        OR checked_at_ts <= now() - make_interval(secs => %(every_s)s::double precision))
ORDER BY plan_id
LIMIT %(limit)s
