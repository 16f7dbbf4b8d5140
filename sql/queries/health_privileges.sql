-- What this role may see: other sessions' details need pg_read_all_stats (or superuser).
SELECT current_user::text AS role,
    r.rolsuper AS superuser,
    pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') AS read_all_stats
FROM pg_roles r
WHERE r.rolname = current_user
