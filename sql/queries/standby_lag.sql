-- On a standby: how far behind the primary its data may be. "As of" is the newest
-- moment the standby is known to reflect the primary: the last commit it replayed
-- or, when it has replayed all it received, the primary's last message to it
-- (streaming sends one at least every wal_sender_timeout / 2, and with every WAL
-- record). receiving: a WAL receiver streams from a primary now (a standby cut off
-- from its primary keeps serving reads, ever older). The WAL receiver's times are
-- visible to pg_read_all_stats only: without it, the last replayed commit alone.
SELECT greatest(0.0, extract(epoch FROM now() - CASE
            WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()
                THEN greatest(pg_last_xact_replay_timestamp(), r.last_msg_send_time)
            ELSE pg_last_xact_replay_timestamp()
        END))::double precision AS lag_s,
    coalesce(r.status = 'streaming', false) AS receiving
FROM (SELECT 1) AS one
LEFT JOIN pg_stat_wal_receiver r ON true
