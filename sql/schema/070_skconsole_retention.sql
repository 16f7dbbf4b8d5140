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
