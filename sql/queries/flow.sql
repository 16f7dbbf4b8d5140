-- Jobs posted and jobs finished per task type within the last %(window_s)s
-- seconds (types with neither are left out; the SLOs are read apart, from
-- skconsole's task-types table: slos.sql).
-- Both counts are range scans of the window's rows only, however many results
-- the table holds: posted through idx_sk_task_results_posted, finished
-- through idx_sk_task_results_status_finalized (one range per status of
-- %(done)s). A job posted with a delay counts when it was posted.
WITH posted AS (
    SELECT r.task_type, count(*) AS n
    FROM sk_task_results_t r
    WHERE r.task_posted_at_ts >= now() - %(window_s)s * interval '1 second'
    GROUP BY r.task_type
),
done AS (
    SELECT r.task_type, count(*) AS n
    FROM sk_task_results_t r
    WHERE r.task_status = ANY(%(done)s::integer[])
        AND r.task_processing_finalized_at_ts >= now() - %(window_s)s * interval '1 second'
    GROUP BY r.task_type
)
SELECT coalesce(p.task_type, d.task_type)::text AS task_type,
    coalesce(p.n, 0) AS posted, coalesce(d.n, 0) AS done
FROM posted p
FULL JOIN done d ON d.task_type = p.task_type
ORDER BY 1
