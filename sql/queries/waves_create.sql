-- A new waves requeue's plan (152_skconsole_waves.sql): the frozen selection's ids in
-- the order requeue takes them, its waves and gate, and the requeue each wave runs.
INSERT INTO sk_wave_plans_t (plan_user, plan_host, plan_origin, job_ids, cuts, ends, gate,
    statuses, task_type, signature, cutoff, selection, reset_errors)
VALUES (%(user)s, %(host)s, %(origin)s, %(job_ids)s::uuid[], %(cuts)s::double precision[],
    %(ends)s::integer[], %(gate)s, %(statuses)s::integer[], %(task_type)s::text,
    %(signature)s::text, %(cutoff)s::timestamptz, %(selection)s, %(reset_errors)s)
RETURNING plan_id
