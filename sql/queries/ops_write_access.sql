-- May this session change the queue? Read-only transaction (--read-only, or
-- the role's default), a standby server, or missing table privileges each say no.
SELECT current_setting('transaction_read_only') = 'on' AS read_only,
    pg_is_in_recovery() AS standby,
    current_user::text AS role,
    array(
        SELECT upper(t.privilege) || ' on ' || t.name
        FROM unnest(%(tables)s::text[], %(privileges)s::text[]) AS t(name, privilege)
        WHERE NOT has_table_privilege(t.name, t.privilege)
    ) || CASE WHEN has_sequence_privilege(pg_get_serial_sequence('sk_audit_t', 'audit_id'), 'USAGE')
              THEN ARRAY[]::text[] ELSE ARRAY['USAGE on the sequence of sk_audit_t'] END
    AS missing
