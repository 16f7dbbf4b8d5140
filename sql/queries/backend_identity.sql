-- This session's server process and when it started (end_backend.sql's key).
SELECT a.pid, a.backend_start FROM pg_stat_activity a WHERE a.pid = pg_backend_pid()
