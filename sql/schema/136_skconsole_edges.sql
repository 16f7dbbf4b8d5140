-- skconsole's additive objects, schema version 8 too: the guarantees at the
-- edges (keys of any size, per-key mutexes with keyed re-posts, fan-in under
-- retention, index builds one at a time). Every statement can run again and
-- changes nothing.

-- The class id of the advisory lock an index build (find-index add, a per-key
-- limit's key index) holds for its session while it runs, keyed by the index
-- name's hashtext(): a second build of the same index refuses in one line
-- instead of taking the first one's build in progress for a failed one.
CREATE OR REPLACE FUNCTION sk_index_build_lock_class()
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT sk_lock_class() + 2 $$;

-- A keyed re-post of a running job (post_jobs.sql) asks for one more run of
-- its newest payload and priority, kept here until the attempt ends: the
-- result row keeps the running attempt's own, so a limit per payload key
-- counts that attempt against the key it started with (a mutex holds), and a
-- search by payload finds it. The statement that ends the attempt (finish,
-- hand back, reap, an operator's cancel of a gone worker's job) re-posts the
-- job with these and clears them.
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_rerun_payload text;
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_rerun_priority integer;
