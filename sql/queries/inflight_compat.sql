-- Jobs in 2 Processing on a database with Stakhanovise.NET's tables alone (read
-- degraded: no owner, attempt or lease data). A job is hung once it has been
-- processing longer than the threshold, as sk_inflight_tasks() judges a job
-- without an owner; the columns are those of inflight.sql. A start that is
-- not within 100 years of now (infinity, written by another application) tells
-- no running time, so it never makes the job hung.
WITH i AS (
    SELECT r.task_id, r.task_type, r.task_error_count + 1 AS attempt, r.task_error_count,
        r.task_last_processing_attempted_at_ts AS started,
        CASE WHEN r.task_last_processing_attempted_at_ts > clock_timestamp() - interval '36500 days'
                AND r.task_last_processing_attempted_at_ts < clock_timestamp() + interval '36500 days'
            THEN extract(epoch FROM clock_timestamp() - r.task_last_processing_attempted_at_ts)
                ::double precision
        END AS running_s
    FROM sk_task_results_t r
    WHERE r.task_status = 2
),
v AS (
    SELECT i.*,
        CASE WHEN i.running_s > %(unowned_s)s THEN
            'no owner recorded; processing for more than '
                || round(%(unowned_s)s::numeric)::text || ' s'
        END AS hung_reason
    FROM i
)
SELECT v.task_id, v.task_type, v.attempt, v.task_error_count AS error_count,
    v.started AS started_at, v.running_s,
    NULL::uuid AS worker_id, NULL::varchar AS worker_host, NULL::integer AS worker_pid,
    NULL::boolean AS worker_connected, NULL::double precision AS heartbeat_age_s,
    NULL::double precision AS timeout_s,
    CASE WHEN v.hung_reason IS NOT NULL THEN 'hung' ELSE 'running (no owner recorded)' END
        AS state,
    coalesce(v.hung_reason,
        'hung after ' || round(%(unowned_s)s::numeric)::text || ' s without an owner') AS note,
    v.hung_reason, NULL::double precision AS reapable_in_s,
    NULL::double precision AS progress_fraction, NULL::text AS progress_message,
    NULL::timestamptz AS progress_at,
    count(*) OVER () AS total,
    count(*) FILTER (WHERE v.hung_reason IS NOT NULL) OVER () AS hung
FROM v
ORDER BY v.hung_reason IS NULL, v.started, v.task_id
LIMIT %(limit)s
