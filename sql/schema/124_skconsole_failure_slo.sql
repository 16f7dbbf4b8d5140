-- skconsole's additive objects: a task type's max failure rate, the second SLO
-- beside its max wait (090). Additive like 020-122: a nullable column; every
-- statement can run again and changes nothing.

-- The largest share (above 0, below 1) of a type's jobs finished within the
-- flow window (5 minutes unless told) that may have failed for good (5
-- Faulted, 6 Fatal) rather than succeeded (NULL: no objective). Set with
-- `skconsole slo set TYPE --max-failure-rate 10%` (audited); read by the flow
-- read model (skconsole/read/flow.py), the console's depth panel, the exporter
-- and `skconsole check` (over it: WARNING; over twice it: CRITICAL). No index
-- comes with it: the counts are flow.sql's, through
-- idx_sk_task_results_status_finalized (020).
ALTER TABLE sk_task_types_t ADD COLUMN IF NOT EXISTS tt_slo_max_failure_rate double precision
    CHECK (tt_slo_max_failure_rate > 0 AND tt_slo_max_failure_rate < 1);
