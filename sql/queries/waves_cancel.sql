-- Cancel an open plan: no process takes another of its ids (a step under way finishes
-- first: this waits for the plan's row). The jobs already requeued run as they are.
-- Its audit row is written with it (columns as skconsole.db.audit.AuditRow builds them).
WITH cancelled AS (
    UPDATE sk_wave_plans_t SET state = %(state)s, reason = %(reason)s, updated_at_ts = now()
    WHERE plan_id = %(plan_id)s AND state = ANY(%(open)s::text[])
    RETURNING plan_id
),
audited AS (
    INSERT INTO sk_audit_t (audit_user, audit_host, audit_action, audit_selection, audit_count,
        audit_details, audit_origin)
    SELECT %(user)s, %(host)s, %(action)s, %(selection)s, 0, %(details)s, %(origin)s
    FROM cancelled
    RETURNING audit_id
)
SELECT c.plan_id, (SELECT audit_id FROM audited) AS audit_id FROM cancelled c
