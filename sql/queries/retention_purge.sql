-- One batch of a worker's retention round, in one statement (one transaction):
-- only while holding the maintenance lock (one worker at a time; the others
-- find it taken and skip the batch), delete up to %(batch)s final results of
-- the policy's scope finalized before its cutoff (never a result with a queue
-- row, never one someone holds locked), and count them in the round's audit
-- row (its columns as skconsole.db.audit.AuditRow builds them): inserted by the
-- round's first batch that deleted anything, added to by the later ones. So the
-- audit count is always what was committed.
WITH got AS (
    SELECT pg_try_advisory_xact_lock(sk_maintenance_lock_class(), 1) AS locked
),
doomed AS (
    SELECT r.task_id
    FROM sk_task_results_t r
    WHERE (SELECT locked FROM got)
        AND r.task_status = ANY(%(statuses)s::integer[])
        AND (%(task_type)s::text IS NULL OR r.task_type = %(task_type)s::text)
        AND (%(except_types)s::text[] IS NULL OR r.task_type <> ALL(%(except_types)s::text[]))
        AND r.task_processing_finalized_at_ts
            < now() - %(older_than_s)s::double precision * interval '1 second'
        AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id)
    LIMIT %(batch)s
    FOR UPDATE OF r SKIP LOCKED
),
gone AS (
    DELETE FROM sk_task_results_t r USING doomed d
    WHERE r.task_id = d.task_id AND r.task_status = ANY(%(statuses)s::integer[])
    RETURNING r.task_id, r.task_status
),
-- their attempts go with them (sk_attempts_t, 120_skconsole_attempts.sql)
attempts_gone AS (
    DELETE FROM sk_attempts_t a WHERE a.task_id IN (SELECT task_id FROM gone)
),
-- a succeeded job others wait for (after=): its success stays on their edges,
-- so they are not cancelled for a parent that is "gone" (130_skconsole_after.sql)
success_kept AS (
    UPDATE sk_task_after_t e SET after_succeeded = true
    FROM gone WHERE e.after_id = gone.task_id AND gone.task_status = 3 AND NOT e.after_succeeded
),
n AS (SELECT count(*)::integer AS n FROM gone),
first_row AS (
    INSERT INTO sk_audit_t (audit_user, audit_host, audit_action, audit_selection, audit_count,
        audit_details)
    SELECT %(user)s, %(host)s, %(action)s, %(selection)s, n.n, %(details)s
    FROM n WHERE n.n > 0 AND %(audit_id)s::bigint IS NULL
    RETURNING audit_id
),
later_row AS (
    UPDATE sk_audit_t a SET audit_count = a.audit_count + n.n
    FROM n WHERE a.audit_id = %(audit_id)s::bigint AND n.n > 0
    RETURNING a.audit_id
)
SELECT (SELECT locked FROM got) AS locked, (SELECT n FROM n) AS purged,
    coalesce((SELECT audit_id FROM first_row), (SELECT audit_id FROM later_row),
        %(audit_id)s::bigint) AS audit_id
