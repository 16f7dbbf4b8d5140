-- skconsole's additive objects, schema version 6: a service-level objective
-- per task type. Additive like 020-080: a nullable column; every statement
-- can run again and changes nothing.

-- The longest a ready job of the type should wait to be claimed, in seconds
-- (NULL: no objective). Waiting counts from when the job became eligible
-- (task_locked_until_ts), as the depth read model's "oldest ready" does, so a
-- delayed job or a retry waiting out its back-off is not late. Set with
-- `skconsole slo set TYPE --max-wait 30s` (audited); read by the flow read
-- model (skconsole/read/flow.py), `skconsole status flow` and `skconsole check`.
-- Nothing in the engine reads it: an objective is watched, not enforced.
--
-- No index comes with it: the flow read model counts the results posted and
-- finished within its window through idx_sk_task_results_posted (030) and
-- idx_sk_task_results_status_finalized (020), whose cost follows the window's
-- rows, not the table's.
ALTER TABLE sk_task_types_t ADD COLUMN IF NOT EXISTS tt_slo_max_wait_seconds double precision
    CHECK (tt_slo_max_wait_seconds > 0);
