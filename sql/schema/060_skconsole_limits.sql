-- skconsole's additive objects: limits per task type across the whole fleet.
-- Additive like 020-050: nullable (or defaulted) columns, an index and a
-- function; every statement can run again and changes nothing.
--
-- tt_max_running: at most this many jobs of the type in 2 Processing at once,
-- over all workers. tt_rate_count per tt_rate_seconds: at most this many
-- claims of the type in a window of that length; the window opens with the
-- first claim after the last one ended (tt_window_start_ts) and counts its
-- claims (tt_window_claims). NULL: no limit. The claim (queries/claim.sql)
-- enforces both in its own statement, so they hold across processes and
-- hosts with no coordinator; types without limits pay nothing.
ALTER TABLE sk_task_types_t ADD COLUMN IF NOT EXISTS tt_max_running integer;
ALTER TABLE sk_task_types_t ADD COLUMN IF NOT EXISTS tt_rate_count integer;
ALTER TABLE sk_task_types_t ADD COLUMN IF NOT EXISTS tt_rate_seconds double precision;
ALTER TABLE sk_task_types_t ADD COLUMN IF NOT EXISTS tt_window_start_ts timestamptz;
ALTER TABLE sk_task_types_t ADD COLUMN IF NOT EXISTS tt_window_claims integer NOT NULL DEFAULT 0;

-- A limited type's running jobs, counted by each of its claims: the in-flight
-- rows of one type only (idx_sk_task_results_processing is keyed by time and
-- would read every in-flight row of every type).
CREATE INDEX IF NOT EXISTS idx_sk_task_results_processing_type
    ON sk_task_results_t (task_type) WHERE task_status = 2;

-- How many jobs of a limited type a claim may take now (at most p_want).
-- Called by the claim for limited types only. It locks the type's row first,
-- so claims of a limited type take turns (the lock is held until the claim
-- commits) and two claims cannot both take the last slot. VOLATILE on
-- purpose: each of its queries gets a fresh snapshot, so the count below sees
-- the jobs of a claim that committed while this one waited for the lock (the
-- calling statement's own snapshot would not). The claim charges the rate
-- window with what it actually took.
CREATE OR REPLACE FUNCTION sk_claim_room(p_type varchar, p_want integer)
RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    lim record;
    running bigint;
    room integer := p_want;
BEGIN
    SELECT tt_max_running, tt_rate_count, tt_rate_seconds, tt_window_start_ts, tt_window_claims
    INTO lim FROM sk_task_types_t WHERE task_type = p_type FOR UPDATE;
    IF NOT FOUND THEN
        RETURN room;
    END IF;
    IF lim.tt_max_running IS NOT NULL THEN
        SELECT count(*) INTO running FROM sk_task_results_t
        WHERE task_status = 2 AND task_type = p_type;
        room := least(room, greatest(lim.tt_max_running - running, 0)::integer);
    END IF;
    IF lim.tt_rate_count IS NOT NULL THEN
        IF lim.tt_window_start_ts IS NULL OR lim.tt_window_start_ts
                + make_interval(secs => lim.tt_rate_seconds) <= clock_timestamp() THEN
            room := least(room, lim.tt_rate_count);  -- a new window opens with this claim
        ELSE
            room := least(room, greatest(lim.tt_rate_count - lim.tt_window_claims, 0));
        END IF;
    END IF;
    RETURN room;
END
$$;
