-- skconsole's additive objects: a running job's progress, as its handler last
-- reported it (ctx.progress(fraction, message)). Additive like 020-124: a table
-- of its own; every statement can run again and changes nothing.

-- One row per job, for the attempt that wrote it (claim_id: the fencing token
-- of sk_task_results_t.sk_claim_id). The engine writes it at most once a second
-- per worker, batched, on its upkeep connection (progress_write.sql), never from
-- the claim or finish statements: those stay as they were. A write lands only
-- while its attempt is the job's current one (2 Processing with that claim id),
-- and never over a newer attempt's row, so a stale attempt cannot overwrite a
-- new one. Reads take a row only beside the attempt that wrote it (the job in 2
-- Processing with the same claim id): a finished job's row is ignored at once
-- and deleted by the next prune (progress_prune.sql, about once a minute). No
-- foreign key: a purge or a claim never waits on this table. Half-full pages
-- keep the updates HOT (no index changes).
CREATE TABLE IF NOT EXISTS sk_task_progress_t (
    task_id uuid PRIMARY KEY,
    claim_id bigint NOT NULL,
    -- NULL: the handler reported a message alone
    progress_fraction double precision
        CHECK (progress_fraction >= 0 AND progress_fraction <= 1),
    progress_message text CHECK (char_length(progress_message) <= 200),
    -- when the handler reported it (the server's clock)
    progress_at_ts timestamptz NOT NULL
) WITH (fillfactor = 50);
