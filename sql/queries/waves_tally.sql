-- What the jobs one wave of a plan requeued have come to now: how many finished
-- (%(settled)s: neither running nor waiting to run; a job retrying after an error has
-- not), how many of those succeeded, how many are gone (their result rows purged), and
-- the failure signature most of its failed ones share. No row: the wave has not started.
SELECT cardinality(w.requeued_ids) AS requeued, t.finished, t.succeeded, t.gone,
    t.top_signature
FROM sk_waves_t w
CROSS JOIN LATERAL (
    SELECT count(r.task_id) FILTER (WHERE r.task_status = ANY(%(settled)s::integer[])) AS finished,
        count(r.task_id) FILTER (WHERE r.task_status = %(succeeded)s) AS succeeded,
        count(*) FILTER (WHERE r.task_id IS NULL) AS gone,
        mode() WITHIN GROUP (ORDER BY r.sk_error_signature) FILTER (
            WHERE r.task_status = ANY(%(settled)s::integer[])
                AND r.task_status <> %(succeeded)s) AS top_signature
    FROM unnest(w.requeued_ids) AS i(task_id)
    LEFT JOIN sk_task_results_t r ON r.task_id = i.task_id
) t
WHERE w.plan_id = %(plan_id)s AND w.wave = %(wave)s
