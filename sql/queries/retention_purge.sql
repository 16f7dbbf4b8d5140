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
        AND sk_retention_due(r.task_status, r.task_type, r.task_processing_finalized_at_ts,
            %(statuses)s::integer[], %(task_type)s::text, %(except_types)s::text[],
            %(older_than_s)s::double precision)
        AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id)
    LIMIT %(batch)s
    FOR UPDATE OF r SKIP LOCKED
),
-- deleted with their attempts, a success kept for the jobs after them
-- (sk_purge_results, 142_skconsole_shared_writes.sql)
n AS (
    SELECT count(*)::integer AS n
    FROM sk_purge_results(ARRAY(SELECT d.task_id FROM doomed d), %(statuses)s::integer[])
),
first_row AS (
    INSERT INTO sk_audit_t (audit_user, audit_host, audit_action, audit_selection, audit_count,
        audit_details, audit_origin)
    SELECT %(user)s, %(host)s, %(action)s, %(selection)s, n.n, %(details)s, %(origin)s
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
