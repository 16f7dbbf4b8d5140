-- skconsole's additive objects, schema version 8: a failover breaks neither
-- promise (docs/explanation/safety-model.md#failover). Every statement can run
-- again over a complete schema and changes nothing.
--
-- When a standby is promoted, the new primary may lack the old one's last
-- commits (asynchronous replication): claims, results, lease renewals, and
-- values of sk_claim_id_seq. A job whose claim was lost looks waiting there
-- while its worker may still run it. So:
-- * every timeline the queue is written on is recorded the first time any of
--   our statements sees it (sk_timeline_state()); on a timeline after the first,
--   claims are held until the longest lease + margin of any worker has passed
--   since then: every execution the old primary handed out has been stopped by
--   then (its worker could renew its lease nowhere but here, and here it checks
--   what it holds before its renewal counts), so nothing it lost runs twice;
-- * a fencing token is the timeline (in its top bits) and the sequence's value:
--   a sequence that rolled back with the WAL never hands out a token again, and
--   a later token is greater, across failovers too.

-- The WAL timeline this server writes on now: 1 for a new cluster, one more at
-- each promotion (a point-in-time recovery starts a new one too). Read from
-- the name of the WAL file being written (pg_walfile_name(), allowed to every
-- role), which switches to the new timeline the moment a promotion ends.
-- NULL where it cannot be known: a standby (recovery in progress), or a server
-- that does not offer these functions; there failovers are not detected.
CREATE OR REPLACE FUNCTION sk_timeline()
RETURNS integer
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    RETURN ('x' || left(pg_walfile_name(pg_current_wal_insert_lsn()), 8))::bit(32)::integer;
EXCEPTION WHEN object_not_in_prerequisite_state OR insufficient_privilege
    OR undefined_function OR feature_not_supported THEN
    RETURN NULL;
END
$$;

-- Every timeline the queue has been written on, from the first our statements
-- saw: when, and until when claims were held on it (first_seen_at_ts on the
-- first timeline: nothing came before it to lose).
CREATE TABLE IF NOT EXISTS sk_timelines_t (
    timeline integer PRIMARY KEY,
    first_seen_at_ts timestamptz NOT NULL,
    claims_held_until_ts timestamptz NOT NULL,
    -- the timeline seen before it (NULL on the first)
    previous_timeline integer
);

-- A new installation (or an upgrade) starts on the timeline it is on, with
-- nothing held. Only into an empty table: on a database that already knows a
-- timeline, a new one is a failover, and only sk_timeline_state() records it.
INSERT INTO sk_timelines_t (timeline, first_seen_at_ts, claims_held_until_ts)
SELECT t.tl, now(), now()
FROM (SELECT sk_timeline() AS tl) AS t
WHERE t.tl IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sk_timelines_t)
ON CONFLICT (timeline) DO NOTHING;

-- The timeline this statement runs on and until when claims are held on it,
-- recording it if it is new. A new timeline after another one holds claims
-- for the longest lease + margin among the registered workers (at least
-- hold_s, the caller's own): a worker that registered in the writes the new
-- primary lost is not in sk_workers_t here, so each caller passes its own.
CREATE OR REPLACE FUNCTION sk_timeline_state(hold_s double precision,
    OUT timeline integer, OUT held_until timestamptz)
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    timeline := sk_timeline();
    IF timeline IS NULL THEN
        RETURN;
    END IF;
    SELECT t.claims_held_until_ts INTO held_until FROM sk_timelines_t t WHERE t.timeline = sk_timeline_state.timeline;
    IF FOUND THEN
        RETURN;
    END IF;
    INSERT INTO sk_timelines_t AS t (timeline, first_seen_at_ts, claims_held_until_ts, previous_timeline)
    SELECT sk_timeline_state.timeline, clock_timestamp(),
        clock_timestamp() + make_interval(secs => greatest(coalesce(hold_s, 0), coalesce((
            SELECT max(w.worker_lease_seconds + w.worker_lease_margin_seconds)
            FROM sk_workers_t w WHERE w.worker_stopped_at_ts IS NULL), 0))),
        (SELECT max(p.timeline) FROM sk_timelines_t p)
    ON CONFLICT ON CONSTRAINT sk_timelines_t_pkey DO NOTHING;
    SELECT t.claims_held_until_ts INTO held_until FROM sk_timelines_t t WHERE t.timeline = sk_timeline_state.timeline;
END
$$;

-- A token's top bits hold its timeline: 2^44 values of the sequence per
-- timeline (55 years at 10,000 claims a second), 2^19 timelines.
ALTER SEQUENCE sk_claim_id_seq MAXVALUE 17592186044415;

-- What a claim adds to the sequence's value to make its fencing token, or NULL
-- while claims are held on this timeline (a claim then takes nothing). 0 where
-- the timeline cannot be known.
CREATE OR REPLACE FUNCTION sk_claim_gate(hold_s double precision)
RETURNS bigint
LANGUAGE sql VOLATILE
AS $$
    SELECT CASE WHEN s.timeline IS NULL THEN 0::bigint
                WHEN s.held_until > clock_timestamp() THEN NULL
                ELSE s.timeline::bigint << 44 END
    FROM sk_timeline_state(hold_s) AS s
$$;
