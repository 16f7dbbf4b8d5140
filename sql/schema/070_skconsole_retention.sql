-- Retention (schema version 4): how long finished results are kept, per task
-- type and as a default. Workers purge what is past it (worker/retention.py);
-- no row at all, the default: nothing is purged automatically.
CREATE TABLE IF NOT EXISTS sk_retention_t (
    -- the type the policy is for; '' is the default, for every type without a
    -- policy of its own (a task type is never empty)
    ret_task_type varchar(250) PRIMARY KEY,
    ret_older_than_seconds double precision NOT NULL CHECK (ret_older_than_seconds > 0),
    -- 5 Faulted results wait for an operator: purged only when this says so
    ret_include_faulted boolean NOT NULL DEFAULT false,
    ret_set_at_ts timestamptz NOT NULL DEFAULT now(),
    ret_set_by varchar(250) NOT NULL
);

-- The class of maintenance advisory locks (sk_lock_class() + 1): the worker
-- liveness keys use every integer of sk_lock_class(), so this is another class.
CREATE OR REPLACE FUNCTION sk_maintenance_lock_class()
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT sk_lock_class() + 1 $$;

-- Whether a result is in a retention policy's scope and past it
-- (retention_purge.sql deletes such results, retention_eligible.sql counts
-- them): in one of the policy's statuses, of its type (NULL: any) and of none
-- of except_types (the default policy leaves out the types with a policy of
-- their own), finalized more than older_than_s ago. One expression, LANGUAGE
-- sql, STABLE (now()), not STRICT: inlined into the caller's query, so the
-- filters given fold and an index on the columns serves as before.
CREATE OR REPLACE FUNCTION sk_retention_due(status integer, task_type text,
    finalized timestamptz, statuses integer[], wanted_type text, except_types text[],
    older_than_s double precision)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT status = ANY(statuses)
        AND (wanted_type IS NULL OR task_type = wanted_type)
        AND (except_types IS NULL OR task_type <> ALL(except_types))
        AND finalized < now() - older_than_s * interval '1 second'
$$;
