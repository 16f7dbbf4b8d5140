-- What a failure group's jobs share: for each payload scalar field (top level
-- and one level nested: payload.region, payload.customer.tier), the host and
-- the code version (app_version) of the worker that ran the last attempt (from
-- the job's attempts; the host also from the worker's registration while it is
-- kept, for a job with no attempt recorded), how many of the group's jobs and how many of their types' other jobs
-- hold each value. Both sides are bounded samples: the group's latest
-- %(sample)s failures (on the failures index) and the latest %(sample)s other
-- jobs of the same types (on the posted index). A value held by fewer than
-- %(min_support)s of the group's jobs, or longer than 200 characters, is left
-- out; the caller ranks the rest (skconsole.read.factors).
WITH grp AS MATERIALIZED (
    SELECT r.task_id, r.task_type, r.task_payload, r.sk_owner_worker_id
    FROM sk_task_results_t r
    WHERE r.task_status IN (4, 5, 6)
        AND sk_signature_matches(r.sk_error_signature, %(signature)s::text)
    ORDER BY sk_last_run_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts)
        DESC NULLS LAST, r.task_id
    LIMIT %(sample)s
),
others AS MATERIALIZED (
    SELECT r.task_id, r.task_type, r.task_payload, r.sk_owner_worker_id
    FROM sk_task_results_t r
    WHERE r.task_type IN (SELECT DISTINCT g.task_type FROM grp g)
        AND NOT (r.task_status IN (4, 5, 6)
                 AND sk_signature_matches(r.sk_error_signature, %(signature)s::text))
    ORDER BY r.task_posted_at_ts DESC, r.task_id
    LIMIT %(sample)s
),
sides AS (
    SELECT s.failing, s.task_id, s.sk_owner_worker_id,
        CASE WHEN jsonb_typeof(sk_try_jsonb(s.task_payload)) = 'object'
            THEN sk_try_jsonb(s.task_payload) END AS doc
    FROM (SELECT true AS failing, g.* FROM grp g
          UNION ALL
          SELECT false, o.* FROM others o) s
),
facts AS (
    SELECT DISTINCT s.failing, s.task_id, f.field, f.value
    FROM sides s
    CROSS JOIN LATERAL (
        SELECT 'payload.' || t.key AS field, t.value #>> '{}' AS value
        FROM jsonb_each(s.doc) t
        WHERE jsonb_typeof(t.value) IN ('string', 'number', 'boolean')
        UNION ALL
        SELECT 'payload.' || t.key || '.' || n.key, n.value #>> '{}'
        FROM jsonb_each(s.doc) t
        CROSS JOIN LATERAL jsonb_each(
            CASE WHEN jsonb_typeof(t.value) = 'object' THEN t.value END) n
        WHERE jsonb_typeof(n.value) IN ('string', 'number', 'boolean')
        UNION ALL
        SELECT v.field, v.value
        FROM (
            SELECT coalesce(la.worker_host,
                    (SELECT w.worker_host FROM sk_workers_t w
                     WHERE w.worker_id = s.sk_owner_worker_id))::text AS host,
                la.app_version::text AS app_version
            FROM (SELECT NULL) AS one
            LEFT JOIN LATERAL (
                SELECT a.worker_host, a.app_version
                FROM sk_attempts_t a
                WHERE a.task_id = s.task_id
                ORDER BY a.attempt DESC
                LIMIT 1
            ) la ON true
        ) h
        CROSS JOIN LATERAL (VALUES ('host', h.host), ('app_version', h.app_version)) AS v(field, value)
        WHERE v.value IS NOT NULL
    ) f
    WHERE length(f.value) <= 200
)
SELECT f.field, f.value,
    count(*) FILTER (WHERE f.failing) AS failing,
    count(*) FILTER (WHERE NOT f.failing) AS others,
    (SELECT count(*) FROM grp) AS failing_total,
    (SELECT count(*) FROM others) AS others_total
FROM facts f
GROUP BY f.field, f.value
HAVING count(*) FILTER (WHERE f.failing) >= %(min_support)s
