-- Queue depth per task type, counted exactly (used while the queue is small
-- enough; depth_estimated.sql beyond): ready now, scheduled (delayed or
-- backing off), in flight (2 Processing), and how long the oldest ready job
-- has been eligible (since its task_locked_until_ts: for a job posted
-- without delay, its age). Stakhanovise.NET's tables only: which types are
-- paused is read apart (paused_types.sql), where skconsole's objects exist.
-- An age comes only from a time within 100 years of now: another application
-- may write -infinity (Npgsql's DateTime.MinValue), which PostgreSQL before 17
-- cannot subtract; such a job counts as ready, without an age.
WITH q AS (
    SELECT task_type,
        count(*) FILTER (WHERE task_locked_until_ts < now()) AS ready,
        count(*) FILTER (WHERE task_locked_until_ts >= now()) AS scheduled,
        extract(epoch FROM now() - min(task_locked_until_ts) FILTER (
            WHERE task_locked_until_ts < now()
                AND task_locked_until_ts > now() - interval '36500 days'))
            ::double precision AS oldest_ready_s
    FROM sk_tasks_queue_t GROUP BY task_type
),
f AS (
    SELECT task_type, count(*) AS in_flight FROM sk_task_results_t WHERE task_status = 2 GROUP BY task_type
)
SELECT coalesce(q.task_type, f.task_type) AS task_type,
    coalesce(q.ready, 0) AS ready, coalesce(q.scheduled, 0) AS scheduled,
    coalesce(f.in_flight, 0) AS in_flight, q.oldest_ready_s
FROM q FULL JOIN f ON f.task_type = q.task_type
ORDER BY 1
