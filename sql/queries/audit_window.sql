-- The operator actions audited from %(since)s (NULL: from the first) until
-- %(until)s, newest first, at most %(limit)s: the audit panel of a past minute
-- (skconsole --at) and an incident bundle's audit rows.
SELECT audit_id, audit_at_ts AS at, audit_user::text AS user, audit_host::text AS host,
    audit_action::text AS action, audit_selection AS selection, audit_count AS count,
    audit_details AS details, audit_origin::text AS origin
FROM sk_audit_t
WHERE (%(since)s::timestamptz IS NULL OR audit_at_ts >= %(since)s::timestamptz)
    AND audit_at_ts < %(until)s::timestamptz
ORDER BY audit_at_ts DESC, audit_id DESC
LIMIT %(limit)s
