-- replication.sql on a database without skconsole's objects (read degraded):
-- no failover record, and the timeline of the last checkpoint.
SELECT pg_is_in_recovery() AS standby,
    (SELECT c.timeline_id FROM pg_control_checkpoint() c) AS timeline,
    (SELECT count(*) FROM pg_stat_replication)::integer AS senders,
    (SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum'))::integer
        AS sync_senders,
    (SELECT count(*) FROM pg_stat_replication WHERE sync_state IS NULL)::integer AS hidden_senders,
    current_setting('synchronous_standby_names') AS sync_names,
    current_setting('synchronous_commit') AS synchronous_commit,
    NULL::integer AS recorded_timeline,
    NULL::integer AS failover_timeline, NULL::integer AS failover_previous,
    NULL::timestamptz AS failover_at, NULL::timestamptz AS claims_held_until,
    NULL::double precision AS failover_age_s, NULL::double precision AS held_for_s
