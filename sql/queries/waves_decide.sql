-- The verdict on a plan's wave whose jobs have all finished, under the plan's row lock:
-- the wave's row keeps its counts and why; the plan goes on to the next wave (state
-- running) or stops (its reason, and an audit row for the stop: %(stop)s).
WITH decided AS (
    UPDATE sk_waves_t SET finished = %(finished)s, succeeded = %(succeeded)s,
        decided_at_ts = now(), reason = %(reason)s
    WHERE plan_id = %(plan_id)s AND wave = %(wave)s
    RETURNING plan_id
),
plan AS (
    UPDATE sk_wave_plans_t SET state = %(state)s, wave = %(next_wave)s,
        reason = CASE WHEN %(stop)s THEN %(reason)s ELSE reason END, updated_at_ts = now()
    WHERE plan_id = %(plan_id)s
    RETURNING plan_id
),
stopped AS (
    INSERT INTO sk_audit_t (audit_user, audit_host, audit_action, audit_selection, audit_count,
        audit_details, audit_origin)
    SELECT %(user)s, %(host)s, %(action)s, %(selection)s, 0, %(details)s, %(origin)s
    WHERE %(stop)s
    RETURNING audit_id
)
SELECT (SELECT count(*) FROM decided) AS waves, (SELECT count(*) FROM plan) AS plans,
    (SELECT audit_id FROM stopped) AS audit_id
