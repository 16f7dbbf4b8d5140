-- After one batch of a wave was requeued (ops_requeue.sql, in the same transaction,
-- under the plan's row lock): the wave's row gets the ids it requeued and counts the
-- others of the batch it left alone (already waiting or running: %(queued)s; gone: no
-- result row; otherwise changed), the wave's audit row is written (its first batch)
-- or its count raised (columns as skconsole.db.audit.AuditRow builds them), and the
-- plan moves on to %(taken)s ids taken, in state %(state)s.
WITH batch AS (
    SELECT b.task_id FROM unnest(%(ids)s::uuid[]) AS b(task_id)
    WHERE b.task_id <> ALL(%(moved)s::uuid[])
),
left_alone AS (
    SELECT count(*) FILTER (WHERE r.task_id IS NOT NULL
                AND r.task_status = ANY(%(queued)s::integer[])) AS waiting,
        count(*) FILTER (WHERE r.task_id IS NULL) AS gone,
        count(*) FILTER (WHERE r.task_id IS NOT NULL
                AND r.task_status <> ALL(%(queued)s::integer[])) AS other
    FROM batch b LEFT JOIN sk_task_results_t r ON r.task_id = b.task_id
),
first_row AS (
    INSERT INTO sk_audit_t (audit_user, audit_host, audit_action, audit_selection, audit_count,
        audit_details, audit_origin)
    SELECT %(user)s, %(host)s, %(action)s, %(selection)s, cardinality(%(moved)s::uuid[]),
        %(details)s, %(origin)s
    WHERE %(audit_id)s::bigint IS NULL
    RETURNING audit_id
),
later_row AS (
    UPDATE sk_audit_t a SET audit_count = a.audit_count + cardinality(%(moved)s::uuid[]),
        audit_details = %(details)s
    WHERE a.audit_id = %(audit_id)s::bigint
    RETURNING a.audit_id
),
wave AS (
    INSERT INTO sk_waves_t AS w (plan_id, wave, taken, requeued_ids, left_waiting, left_gone,
        left_other, audit_id)
    SELECT %(plan_id)s, %(wave)s, cardinality(%(ids)s::uuid[]), %(moved)s::uuid[], l.waiting,
        l.gone, l.other, coalesce((SELECT audit_id FROM first_row), %(audit_id)s::bigint)
    FROM left_alone l
    ON CONFLICT (plan_id, wave) DO UPDATE SET taken = w.taken + EXCLUDED.taken,
        requeued_ids = w.requeued_ids || EXCLUDED.requeued_ids,
        left_waiting = w.left_waiting + EXCLUDED.left_waiting,
        left_gone = w.left_gone + EXCLUDED.left_gone,
        left_other = w.left_other + EXCLUDED.left_other
    RETURNING w.left_waiting, w.left_gone, w.left_other
),
plan AS (
    UPDATE sk_wave_plans_t SET taken = %(taken)s, state = %(state)s, updated_at_ts = now()
    WHERE plan_id = %(plan_id)s
    RETURNING plan_id
)
SELECT coalesce((SELECT audit_id FROM first_row), (SELECT audit_id FROM later_row))
        AS audit_id,
    wave.left_waiting, wave.left_gone, wave.left_other, (SELECT count(*) FROM plan) AS plans
FROM wave
