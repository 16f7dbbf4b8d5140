-- skconsole's additive objects: circuit breakers keyed on a failure signature
-- (schema version 9). Re-runnable.
--
-- A breaker watches one type's failures of one signature (the failure group's
-- key, sk_signature_key) and, while open, holds back the jobs of that type that
-- would hit it: those sharing its payload term (payload.PATH=VALUE, as `F` and
-- --where name it; none: every job of the type), and those whose last failure
-- was that signature (a retry would burn one more attempt on it). The rest of
-- the type keeps running. States (sk_breakers_t.state):
--   0 closed     nothing held; armed when it has a threshold: opens when the
--                signature's failures of the type in the last window_s reach it
--   1 open       holds back; after cool_down_s, half-open
--   2 half-open  lets `canaries` held jobs run (released by one tick, so never
--                more, however many workers claim); closes when all of them end
--                without the signature, reopens when one fails with it
-- Opened and closed by hand too (skconsole breaker open / close; audited).
--
-- How holding back works, with nothing on the claim path of a type without a
-- breaker: sk_task_types_t.tt_breaker_held says a type has a breaker open or
-- half-open, and only then does the claim ask sk_breaker_holds() of each queue
-- row it walks. So that the walk does not pass the same held rows claim after
-- claim, a tick parks them: their queue row's due time becomes 'infinity' (past
-- every claim's and a Stakhanovise.NET consumer's "due" test), the time it had
-- kept in sk_breaker_held_t and given back when the breaker closes. The tick
-- (sk_breaker_tick(), every worker's upkeep every 2 s, each breaker taken FOR
-- UPDATE SKIP LOCKED: leaderless, one tick per breaker at a time) parks, opens,
-- half-opens, releases canaries, and decides. A job posted between two ticks is
-- held by the claim's test alone.

CREATE TABLE IF NOT EXISTS sk_breakers_t (
    breaker_id bigserial PRIMARY KEY,
    task_type varchar(250) NOT NULL,
    -- the failure group's key: sk_signature_key() of the stored signature
    signature text NOT NULL,
    -- the payload term its jobs share (NULL: the whole type)
    term_path text[],
    term_value text,
    -- opens by itself at `threshold` failures in `window_s` (NULL: by hand only)
    threshold integer,
    window_s double precision,
    cool_down_s double precision NOT NULL DEFAULT 60,
    canaries integer NOT NULL DEFAULT 3,
    state smallint NOT NULL DEFAULT 0,
    state_at timestamptz NOT NULL DEFAULT now(),
    opened_count integer NOT NULL DEFAULT 0,
    -- half-open rounds so far: each released at most `canaries` jobs
    rounds integer NOT NULL DEFAULT 0,
    -- why it is in its state, in words ("24 failures in 60 s", "canary ... failed")
    reason text,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ck_sk_breakers_state CHECK (state IN (0, 1, 2)),
    CONSTRAINT ck_sk_breakers_term CHECK ((term_path IS NULL) = (term_value IS NULL)),
    CONSTRAINT ck_sk_breakers_threshold CHECK ((threshold IS NULL) = (window_s IS NULL)
        AND coalesce(threshold, 1) >= 1 AND coalesce(window_s, 1) > 0),
    CONSTRAINT ck_sk_breakers_canaries CHECK (canaries >= 1 AND cool_down_s >= 0)
);
-- one breaker per type, signature and term
CREATE UNIQUE INDEX IF NOT EXISTS ux_sk_breakers_key ON sk_breakers_t
    (task_type, signature, coalesce(term_path, '{}'::text[]), coalesce(term_value, ''));

-- The jobs a breaker parked: their queue row's due time before (given back when
-- the breaker closes), and, for a canary, when it was released.
CREATE TABLE IF NOT EXISTS sk_breaker_held_t (
    task_id uuid PRIMARY KEY,
    breaker_id bigint NOT NULL,
    due_at timestamptz NOT NULL,
    held_at timestamptz NOT NULL DEFAULT now(),
    canary_at timestamptz
);
CREATE INDEX IF NOT EXISTS idx_sk_breaker_held_breaker ON sk_breaker_held_t (breaker_id);

-- Whether the claim must ask sk_breaker_holds() of the type's rows.
ALTER TABLE sk_task_types_t ADD COLUMN IF NOT EXISTS tt_breaker_held boolean NOT NULL
    DEFAULT false;

-- Whether a breaker's test holds back a job: it shares the breaker's payload
-- term (or the breaker has none), or its last failure was the signature.
CREATE OR REPLACE FUNCTION sk_breaker_matches(term_path text[], term_value text,
    signature text, p_id uuid, p_payload text)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT term_path IS NULL
        OR sk_payload_term(p_payload, term_path, term_value)
        OR EXISTS (SELECT 1 FROM sk_task_results_t r
                   WHERE r.task_id = p_id AND r.sk_error_signature = signature)
$$;

-- Whether a queue row of a type with a breaker open or half-open is held back:
-- one of them matches it, and it is not a released canary waiting for its one
-- attempt (a canary that failed and waits for its retry is held like the others
-- until the tick decides: a round lets each canary run once).
CREATE OR REPLACE FUNCTION sk_breaker_holds(p_type varchar, p_id uuid, p_payload text)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT EXISTS (
        SELECT 1 FROM sk_breakers_t b
        WHERE b.task_type = p_type AND b.state IN (1, 2)
            AND sk_breaker_matches(b.term_path, b.term_value, b.signature, p_id, p_payload))
        AND NOT EXISTS (
            SELECT 1 FROM sk_breaker_held_t h
            LEFT JOIN sk_task_results_t r ON r.task_id = h.task_id
            WHERE h.task_id = p_id AND h.canary_at IS NOT NULL
                AND (r.task_last_processing_attempted_at_ts IS NULL
                    OR r.task_last_processing_attempted_at_ts < h.canary_at))
$$;

-- The type's switch for the claim, from its breakers.
CREATE OR REPLACE FUNCTION sk_breaker_flag(p_type varchar)
RETURNS void
LANGUAGE sql
AS $$
    INSERT INTO sk_task_types_t AS t (task_type, tt_breaker_held)
    VALUES (p_type, EXISTS (SELECT 1 FROM sk_breakers_t b
                            WHERE b.task_type = p_type AND b.state IN (1, 2)))
    ON CONFLICT (task_type) DO UPDATE SET tt_breaker_held = EXCLUDED.tt_breaker_held
    WHERE t.tt_breaker_held IS DISTINCT FROM EXCLUDED.tt_breaker_held
$$;

-- Park the held rows among the first p_scan of the breaker's type in claim
-- order (what the next claims would walk): their due time to 'infinity', kept in
-- sk_breaker_held_t. A row someone holds locked (being claimed) is left.
CREATE OR REPLACE FUNCTION sk_breaker_park(p_breaker bigint, p_scan integer)
RETURNS integer
LANGUAGE sql
AS $$
    WITH b AS (
        SELECT * FROM sk_breakers_t WHERE breaker_id = p_breaker AND state IN (1, 2)
    ),
    walked AS (
        SELECT q.task_id
        FROM b CROSS JOIN LATERAL (
            SELECT q.task_id FROM sk_tasks_queue_t q
            WHERE q.task_type >= b.task_type AND q.task_type <= b.task_type
                AND q.task_locked_until_ts < 'infinity'
            ORDER BY q.task_type, q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id
            LIMIT p_scan
        ) AS q
    ),
    hit AS (
        SELECT q.task_id, q.task_locked_until_ts
        FROM sk_tasks_queue_t q JOIN walked w ON w.task_id = q.task_id CROSS JOIN b
        WHERE sk_breaker_matches(b.term_path, b.term_value, b.signature, q.task_id, q.task_payload)
            AND NOT EXISTS (SELECT 1 FROM sk_breaker_held_t h
                            WHERE h.task_id = q.task_id AND h.canary_at IS NOT NULL)
        FOR UPDATE OF q SKIP LOCKED
    ),
    kept AS (
        -- a row parked before and made due since (by an operator) is parked again,
        -- with its new due time
        INSERT INTO sk_breaker_held_t AS h (task_id, breaker_id, due_at)
        SELECT hit.task_id, p_breaker, hit.task_locked_until_ts FROM hit
        ON CONFLICT (task_id) DO UPDATE SET due_at = EXCLUDED.due_at, held_at = now()
        WHERE h.canary_at IS NULL
        RETURNING h.task_id
    ),
    parked AS (
        UPDATE sk_tasks_queue_t q SET task_locked_until_ts = 'infinity'
        FROM kept WHERE q.task_id = kept.task_id
        RETURNING q.task_id
    )
    SELECT count(*)::integer FROM parked
$$;

-- Close a breaker: every parked row gets its due time back (a row changed since,
-- no longer parked, is left as it is), its held rows go, the type's switch follows.
CREATE OR REPLACE FUNCTION sk_breaker_close(p_breaker bigint, p_reason text)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    given_back integer;
    kind varchar;
BEGIN
    WITH gone AS (
        DELETE FROM sk_breaker_held_t h WHERE h.breaker_id = p_breaker
        RETURNING h.task_id, h.due_at
    ),
    back AS (
        UPDATE sk_tasks_queue_t q SET task_locked_until_ts = gone.due_at
        FROM gone WHERE q.task_id = gone.task_id AND q.task_locked_until_ts = 'infinity'
        RETURNING q.task_id
    )
    SELECT count(*)::integer INTO given_back FROM back;
    UPDATE sk_breakers_t SET state = 0, state_at = now(), reason = p_reason
    WHERE breaker_id = p_breaker
    RETURNING task_type INTO kind;
    PERFORM sk_breaker_flag(kind);
    RETURN given_back;
END
$$;

-- Open a breaker (again): it holds back from now on, and parks what it can.
CREATE OR REPLACE FUNCTION sk_breaker_open(p_breaker bigint, p_reason text, p_scan integer)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    kind varchar;
BEGIN
    -- canaries of a round that failed are held again like any other row
    DELETE FROM sk_breaker_held_t WHERE breaker_id = p_breaker AND canary_at IS NOT NULL;
    UPDATE sk_breakers_t SET state = 1, state_at = now(), reason = p_reason,
        opened_count = opened_count + 1
    WHERE breaker_id = p_breaker
    RETURNING task_type INTO kind;
    PERFORM sk_breaker_flag(kind);
    RETURN sk_breaker_park(p_breaker, p_scan);
END
$$;

-- One pass over every breaker that may have something to do (armed, open or
-- half-open), each taken FOR UPDATE SKIP LOCKED: whichever worker gets it. What
-- changed comes back, one row per breaker that changed state or parked rows.
CREATE OR REPLACE FUNCTION sk_breaker_tick(p_scan integer)
RETURNS TABLE (breaker_id bigint, task_type varchar, was smallint, state smallint,
    parked integer, released integer, reason text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    b sk_breakers_t;
    n bigint;
    moved integer;
    freed integer;
    ended integer;
    failed uuid;
    total integer;
    why text;
BEGIN
    FOR b IN
        SELECT * FROM sk_breakers_t x
        WHERE x.state IN (1, 2) OR x.threshold IS NOT NULL
        ORDER BY x.breaker_id
        FOR UPDATE SKIP LOCKED
    LOOP
        was := b.state;
        moved := 0;
        freed := 0;
        why := NULL;
        IF b.state = 0 THEN
            -- failures since it last closed (or was made), within the window
            SELECT count(*) INTO n FROM sk_task_results_t r
            WHERE r.task_status IN (4, 5, 6) AND r.task_type = b.task_type
                AND r.sk_error_signature = b.signature
                AND r.task_last_processing_attempted_at_ts
                    >= greatest(now() - make_interval(secs => b.window_s), b.state_at);
            IF n >= b.threshold THEN
                why := format('%s failures in %s s (threshold %s)', n, b.window_s, b.threshold);
                moved := sk_breaker_open(b.breaker_id, why, p_scan);
                b.state := 1;
                b.state_at := now();
            END IF;
        ELSE
            moved := sk_breaker_park(b.breaker_id, p_scan);
        END IF;
        IF b.state = 1 AND was = 1 AND now() >= b.state_at + make_interval(secs => b.cool_down_s) THEN
            -- half-open: release `canaries` held jobs, the longest due first
            WITH pick AS (
                SELECT h.task_id FROM sk_breaker_held_t h
                JOIN sk_tasks_queue_t q ON q.task_id = h.task_id
                WHERE h.breaker_id = b.breaker_id AND q.task_locked_until_ts = 'infinity'
                ORDER BY h.due_at, h.task_id
                LIMIT b.canaries
                FOR UPDATE OF q SKIP LOCKED
            ),
            marked AS (
                UPDATE sk_breaker_held_t h SET canary_at = now()
                FROM pick WHERE h.task_id = pick.task_id
                RETURNING h.task_id
            ),
            due AS (
                UPDATE sk_tasks_queue_t q SET task_locked_until_ts = now()
                FROM marked WHERE q.task_id = marked.task_id
                RETURNING q.task_id
            )
            SELECT count(*)::integer INTO freed FROM due;
            IF freed = 0 THEN
                why := 'half-open with no job held: nothing left to hold back';
                PERFORM sk_breaker_close(b.breaker_id, why);
                b.state := 0;
            ELSE
                why := format('half-open: %s canar%s released', freed,
                    CASE WHEN freed = 1 THEN 'y' ELSE 'ies' END);
                UPDATE sk_breakers_t x SET state = 2, state_at = now(), reason = why,
                    rounds = x.rounds + 1
                WHERE x.breaker_id = b.breaker_id;
                b.state := 2;
            END IF;
        ELSIF b.state = 2 AND was = 2 THEN
            -- the round's canaries: one failed with the signature reopens it; all
            -- ended otherwise closes it
            SELECT count(*)::integer,
                count(*) FILTER (WHERE r.task_id IS NULL OR r.task_status = 7
                    OR (r.task_status IN (3, 4, 5, 6)
                        AND sk_last_run_at(r.task_processing_finalized_at_ts,
                            r.task_last_processing_attempted_at_ts) >= h.canary_at))::integer,
                (array_agg(h.task_id ORDER BY h.task_id) FILTER (
                    WHERE r.task_status IN (4, 5, 6)
                        AND r.task_last_processing_attempted_at_ts >= h.canary_at
                        AND r.sk_error_signature = b.signature))[1]
            INTO total, ended, failed
            FROM sk_breaker_held_t h
            LEFT JOIN sk_task_results_t r ON r.task_id = h.task_id
            WHERE h.breaker_id = b.breaker_id AND h.canary_at IS NOT NULL;
            IF failed IS NOT NULL THEN
                why := format('canary %s failed with the signature again', failed);
                moved := moved + sk_breaker_open(b.breaker_id, why, p_scan);
                b.state := 1;
            ELSIF total > 0 AND ended = total THEN
                why := format('%s canar%s ended without the signature', total,
                    CASE WHEN total = 1 THEN 'y' ELSE 'ies' END);
                PERFORM sk_breaker_close(b.breaker_id, why);
                b.state := 0;
            END IF;
        END IF;
        IF b.state <> was OR moved > 0 OR freed > 0 THEN
            breaker_id := b.breaker_id;
            task_type := b.task_type;
            state := b.state;
            parked := moved;
            released := freed;
            reason := why;
            RETURN NEXT;
        END IF;
    END LOOP;
    -- held rows whose queue row went (claimed as a canary, cancelled, purged),
    -- other than a round's canaries, which the decision above still reads
    DELETE FROM sk_breaker_held_t h
    WHERE h.canary_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = h.task_id);
END
$$;
