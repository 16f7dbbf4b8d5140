-- What replication buys this queue, and the last failover it went through
-- (134_skconsole_failover.sql). timeline: the one this server writes on (a
-- standby's: the last checkpoint's, as sk_timeline() cannot tell during
-- recovery). Standbys streaming from this server: every role sees that a WAL
-- sender runs; only pg_read_all_stats shows whether it is synchronous (hidden:
-- their sync_state is NULL). recorded_timeline: the newest timeline our
-- statements have seen (a server on a newer one has failed over, and no worker
-- has been there yet).
SELECT pg_is_in_recovery() AS standby,
    coalesce(sk_timeline(), (SELECT c.timeline_id FROM pg_control_checkpoint() c)) AS timeline,
    (SELECT count(*) FROM pg_stat_replication)::integer AS senders,
    (SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum'))::integer
        AS sync_senders,
    (SELECT count(*) FROM pg_stat_replication WHERE sync_state IS NULL)::integer AS hidden_senders,
    current_setting('synchronous_standby_names') AS sync_names,
    current_setting('synchronous_commit') AS synchronous_commit,
    (SELECT max(t.timeline) FROM sk_timelines_t t) AS recorded_timeline,
    f.timeline AS failover_timeline, f.previous_timeline AS failover_previous,
    f.first_seen_at_ts AS failover_at, f.claims_held_until_ts AS claims_held_until,
    extract(epoch FROM now() - f.first_seen_at_ts)::double precision AS failover_age_s,
    greatest(0, extract(epoch FROM f.claims_held_until_ts - now()))::double precision AS held_for_s
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (
    SELECT t.timeline, t.previous_timeline, t.first_seen_at_ts, t.claims_held_until_ts
    FROM sk_timelines_t t
    WHERE t.previous_timeline IS NOT NULL
    ORDER BY t.first_seen_at_ts DESC
    LIMIT 1
) AS f ON true
