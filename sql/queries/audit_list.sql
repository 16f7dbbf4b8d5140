-- The latest operator actions, newest first (optionally of one action).
SELECT audit_id, audit_at_ts AS at, audit_user::text AS user, audit_host::text AS host,
    audit_action::text AS action, audit_selection AS selection, audit_count AS count,
    audit_details AS details, audit_origin::text AS origin
FROM sk_audit_t
WHERE %(action)s::text IS NULL OR audit_action = %(action)s::text
ORDER BY audit_id DESC
LIMIT %(limit)s
