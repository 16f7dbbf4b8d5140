-- Waves requeues, newest first (or the one %(plan_id)s names), with what each did so far.
SELECT p.plan_id, p.created_at_ts AS created_at, p.updated_at_ts AS updated_at,
    p.plan_user AS user, p.plan_host AS host, p.plan_origin AS origin, p.state, p.wave,
    p.cuts, p.ends, p.gate, p.reset_errors, p.selection, p.reason,
    cardinality(p.job_ids) AS jobs, p.taken,
    coalesce((SELECT sum(cardinality(w.requeued_ids)) FROM sk_waves_t w
        WHERE w.plan_id = p.plan_id), 0)::bigint AS requeued
FROM sk_wave_plans_t p
WHERE %(plan_id)s::bigint IS NULL OR p.plan_id = %(plan_id)s::bigint
ORDER BY p.plan_id DESC
LIMIT %(limit)s
