-- One step of advancing a plan (skconsole/db/waves.py) starts here, in the step's
-- transaction: the plan's row, if it is open and no other process holds it (SKIP
-- LOCKED: a plan another process is advancing right now is left to it), with the ids
-- its current wave takes next (at most %(batch)s) and what that wave did so far.
SELECT p.plan_id, p.state, p.wave, cardinality(p.ends) AS waves, p.taken,
    p.ends[p.wave] AS wave_end, p.ends[p.wave] - coalesce(p.ends[p.wave - 1], 0) AS wave_size,
    p.gate, p.cuts, p.reset_errors, p.statuses, p.task_type, p.signature, p.cutoff,
    p.selection, p.plan_user, p.plan_host,
    p.job_ids[p.taken + 1 : least(p.taken + %(batch)s, p.ends[p.wave])] AS next_ids,
    w.audit_id, coalesce(cardinality(w.requeued_ids), 0) AS wave_requeued,
    coalesce(w.left_waiting + w.left_gone + w.left_other, 0) AS wave_left,
    prev.reason AS previous_reason
FROM sk_wave_plans_t p
LEFT JOIN sk_waves_t w ON w.plan_id = p.plan_id AND w.wave = p.wave
LEFT JOIN sk_waves_t prev ON prev.plan_id = p.plan_id AND prev.wave = p.wave - 1
WHERE p.plan_id = %(plan_id)s AND p.state = ANY(%(open)s::text[])
FOR UPDATE OF p SKIP LOCKED
