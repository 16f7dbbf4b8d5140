-- Jobs posted, and jobs finished by how they ended, per task type within the
-- last %(window_s)s seconds (types with none are left out; the SLOs are read
-- apart, from skconsole's task-types table: slos.sql): succeeded (3
-- Processed), failed (5 Faulted, 6 Fatal: %(failed)s) and cancelled (7).
-- Both scans are range scans of the window's rows only, however many results
-- the table holds: posted through idx_sk_task_results_posted, finished
-- through idx_sk_task_results_status_finalized (one range per status of
-- %(done)s). A job posted with a delay counts when it was posted; a job counts
-- by how it stands now (a Faulted job requeued and processed since is a success).
WITH posted AS (
    SELECT r.task_type, count(*) AS n
    FROM sk_task_results_t r
    WHERE r.task_posted_at_ts >= now() - %(window_s)s * interval '1 second'
    GROUP BY r.task_type
),
done AS (
    SELECT r.task_type,
        count(*) FILTER (WHERE r.task_status = 3) AS succeeded,
        count(*) FILTER (WHERE r.task_status = ANY(%(failed)s::integer[])) AS failed,
        count(*) FILTER (WHERE r.task_status = 7) AS cancelled
    FROM sk_task_results_t r
    WHERE r.task_status = ANY(%(done)s::integer[])
        AND r.task_processing_finalized_at_ts >= now() - %(window_s)s * interval '1 second'
    GROUP BY r.task_type
)
SELECT coalesce(p.task_type, d.task_type)::text AS task_type,
    coalesce(p.n, 0) AS posted, coalesce(d.succeeded, 0) AS succeeded,
    coalesce(d.failed, 0) AS failed, coalesce(d.cancelled, 0) AS cancelled
FROM posted p
FULL JOIN done d ON d.task_type = p.task_type
ORDER BY 1
