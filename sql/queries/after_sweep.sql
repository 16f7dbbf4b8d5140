-- The upkeep sweep of fan-in jobs (after=): decide the jobs waiting for a
-- parent that has ended (3 Processed, 6 Fatal, 7 Cancelled) or is gone, yet
-- still have their edges. The finish statements do this atomically; what is
-- left for here: a post that raced its parent's finish (it read the parent as
-- unfinished, the finish could not see its new edge), a parent finished by a
-- Stakhanovise.NET consumer (skconsole's finish SQL never ran), and a waiter
-- that was locked by someone else when its parent finished. sk_task_after_t
-- holds only waiting jobs' edges: the scan is small. Returns how many jobs it
-- released or cancelled.
SELECT coalesce(sk_release_after(x.ids, false), 0) AS changed
FROM (
    SELECT ARRAY(
        SELECT DISTINCT e.after_id
        FROM sk_task_after_t e
        LEFT JOIN sk_task_results_t p ON p.task_id = e.after_id
        WHERE p.task_status IN (3, 6, 7)
            OR (p.task_id IS NULL
                AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = e.after_id))
        LIMIT %(limit)s
    ) AS ids
) AS x
WHERE cardinality(x.ids) > 0
