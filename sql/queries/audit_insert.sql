-- One executed operator action: who, what, on which selection, how many changed.
INSERT INTO sk_audit_t (audit_user, audit_host, audit_action, audit_selection, audit_count,
    audit_details)
VALUES (%(user)s, %(host)s, %(action)s, %(selection)s, %(count)s, %(details)s)
RETURNING audit_id, audit_at_ts
