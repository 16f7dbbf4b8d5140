-- The latest operator actions, newest first (optionally of one action).
SELECT audit_id, audit_at_ts, audit_user::text, audit_host::text, audit_action::text,
    audit_selection, audit_count, audit_details
FROM sk_audit_t
WHERE %(action)s::text IS NULL OR audit_action = %(action)s::text
ORDER BY audit_id DESC
LIMIT %(limit)s
