-- One executed operator action: who, what, on which selection, how many changed, and
-- which face acted (cli, console, worker, python).
INSERT INTO sk_audit_t (audit_user, audit_host, audit_action, audit_selection, audit_count,
    audit_details, audit_origin)
VALUES (%(user)s, %(host)s, %(action)s, %(selection)s, %(count)s, %(details)s, %(origin)s)
RETURNING audit_id, audit_at_ts
