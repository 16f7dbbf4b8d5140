-- The waves of one plan so far, in order: what each requeued and left alone, its audit
-- row, and the verdict on it (NULL until decided).
SELECT w.wave, w.started_at_ts AS started_at, w.taken,
    cardinality(w.requeued_ids) AS requeued, w.left_waiting, w.left_gone, w.left_other,
    w.audit_id, w.finished, w.succeeded, w.decided_at_ts AS decided_at, w.reason
FROM sk_waves_t w
WHERE w.plan_id = %(plan_id)s
ORDER BY w.wave
