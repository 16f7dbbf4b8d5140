-- skconsole's additive objects: the expressions many queries share, written once.
-- Functions only, no table or column: every statement can run again and changes
-- nothing (setup re-runs the scripts when their text changes, so no new schema
-- version). They take column values, not rows, so they depend on no table (a
-- Stakhanovise.NET migration can still alter its tables) and name none (nothing
-- for a --mapping to rewrite).
--
-- Each is a one-expression LANGUAGE sql function, IMMUTABLE and not STRICT:
-- PostgreSQL inlines it into the calling query before planning, so the planner
-- sees the plain expression (the optional filters' constant parts fold away, an
-- index on the column is used as before, an index-only scan stays index-only).
-- The queries a database with Stakhanovise.NET's tables alone runs (read
-- degraded: history.sql, *_compat.sql) cannot call them and spell them out.

-- When a job last ran: the end of its latest attempt, else its start (NULL: it
-- never ran). The instant a failed job failed at.
CREATE OR REPLACE FUNCTION sk_last_run_at(finalized timestamptz, attempted timestamptz)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(finalized, attempted) $$;

-- A job's last activity: when it last ran, else when it was posted. What the
-- operator selections' age (--older-than) and order are measured by. A queue
-- row without a result row (posted by hand) passes its own posted time.
CREATE OR REPLACE FUNCTION sk_last_activity_at(
    finalized timestamptz, attempted timestamptz, posted timestamptz)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(finalized, attempted, posted) $$;

-- The key of a failure group: the stored error signature, or '(no error text)'
-- for a failure without one (skconsole.core.signature.NO_ERROR).
CREATE OR REPLACE FUNCTION sk_signature_key(signature text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(signature, '(no error text)') $$;

-- The signature filter of the operator selections: a job's stored signature
-- matches the group key asked for (its sk_signature_key), and every job
-- matches when none is asked for (wanted NULL). A queue row whose job has no
-- result row (has_result false) is in no group. Written as ORs rather than
-- sk_signature_key(signature) = wanted so that, once the key is a constant,
-- what is left is signature = 'key' (or signature IS NULL): indexable.
CREATE OR REPLACE FUNCTION sk_signature_matches(
    signature text, wanted text, has_result boolean DEFAULT true)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT wanted IS NULL
        OR signature = wanted
        OR (wanted = '(no error text)' AND signature IS NULL AND has_result)
$$;

-- What a job's next run takes, payload or priority, when an attempt ends: a
-- keyed re-post that arrived while it ran (requested) gives the newest (kept
-- apart meanwhile, the running attempt keeping its own: sk_rerun_payload and
-- sk_rerun_priority, 136_skconsole_edges.sql); without one, or when it gave
-- none, the job keeps its own. Every statement that ends an attempt sets both
-- columns with it and clears the request (finish_*.sql, hand_back.sql,
-- reap.sql, ops_cancel.sql).
CREATE OR REPLACE FUNCTION sk_rerun_value(requested boolean, newest anyelement, own anyelement)
RETURNS anyelement
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN requested THEN coalesce(newest, own) ELSE own END $$;
