-- skconsole's additive objects, schema version 3: periodic jobs, pipelines
-- and snoozes. Additive like 020-040: new nullable (or defaulted) columns and
-- a table of its own; every statement can run again and changes nothing.

-- Lineage. A job posted by a handler (ctx.post) or as the next stage of a
-- pipeline (then=) is written in the transaction that records its parent's
-- success, and names its parent here; stage jobs also name their pipeline and
-- their stage number (2, 3, ...: the first stage, posted by a producer, has
-- neither). Stakhanovise.NET never reads these columns.
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_parent_task_id uuid;
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_pipeline varchar(250);
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_stage integer;
CREATE INDEX IF NOT EXISTS idx_sk_task_results_parent
    ON sk_task_results_t (sk_parent_task_id) WHERE sk_parent_task_id IS NOT NULL;

-- How often a handler asked to run later (raise Snooze(seconds)): a snooze is
-- neither an error nor a failed attempt, so it has a count of its own.
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_snooze_count integer NOT NULL DEFAULT 0;

-- Periodic jobs: one row per scheduled task type. Workers that run the type
-- publish its definition here (the last one started wins) and take turns
-- posting its ticks: a tick is posted only by the transaction that moves
-- sch_last_tick_ts forward to it, under an id derived from the type and the
-- tick's time, so N workers post one job per tick and a tick that was posted
-- is never posted again (even after its result row was purged).
CREATE TABLE IF NOT EXISTS sk_schedules_t (
    task_type varchar(250) PRIMARY KEY,
    sch_cron text,
    sch_every_seconds double precision,
    sch_timezone text NOT NULL DEFAULT 'UTC',
    sch_payload text,
    -- after downtime (or a pause): 'once' posts the latest missed tick, 'skip' none
    sch_missed varchar(10) NOT NULL DEFAULT 'once',
    -- the latest tick taken care of (posted, or skipped as missed)
    sch_last_tick_ts timestamptz,
    -- the job of the latest tick that was posted, and when it was posted
    sch_last_task_id uuid,
    sch_last_posted_ts timestamptz,
    sch_defined_at_ts timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT sk_schedules_one_kind CHECK ((sch_cron IS NULL) <> (sch_every_seconds IS NULL)),
    CONSTRAINT sk_schedules_missed CHECK (sch_missed IN ('once', 'skip'))
);
