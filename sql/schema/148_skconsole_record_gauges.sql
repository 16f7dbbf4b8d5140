-- skconsole's additive objects: the per-minute gauges beside the per-minute record
-- (146_skconsole_record.sql). The record counts events (posts, starts, finishes);
-- how many jobs were waiting or running, and how many workers were alive, are
-- states, which no event count rebuilds. So once a minute one worker's upkeep
-- (whichever gets there first: gauges_due.sql, then gauges_write.sql with what
-- the depth read counted, ON CONFLICT DO NOTHING) writes per task type the jobs
-- waiting (ready: due; scheduled: not yet due) and running, and, in the row of
-- type '', the workers alive. Trimmed with the record's keep; never touched by
-- purge or retention. Re-runnable.
--
-- estimated: ready and scheduled were scaled up from a sample of the queue's
-- pages (depth_estimated.sql, a big queue), as the depth panel says.
CREATE TABLE IF NOT EXISTS sk_record_gauges_t (
    minute timestamptz NOT NULL,
    task_type varchar(250) NOT NULL,
    ready bigint NOT NULL DEFAULT 0,
    scheduled bigint NOT NULL DEFAULT 0,
    running bigint NOT NULL DEFAULT 0,
    workers integer,
    estimated boolean NOT NULL DEFAULT false,
    CONSTRAINT pk_sk_record_gauges_t PRIMARY KEY (minute, task_type)
);
