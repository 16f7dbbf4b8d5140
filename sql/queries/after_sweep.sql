-- The upkeep sweep of fan-in jobs (after=): decide the jobs waiting for a
-- parent that has ended (3 Processed, 6 Fatal, 7 Cancelled) or is gone, yet
-- still have their edges. The finish statements do this atomically; what is
-- left for here: a post that raced its parent's finish (it read the parent as
-- unfinished, the finish could not see its new edge), a parent finished by a
-- Stakhanovise.NET consumer (skconsole's finish SQL never ran), and a waiter
-- that was locked by someone else when its parent finished.
-- One worker at a time (the maintenance lock, key 3; the others skip the
-- round). Bounded: at most %(scan)s distinct parents a round, read off the
-- after_id index one by one (a loose index scan: 100,000 children waiting for
-- one job cost one step), from after %(from)s (where the last round stopped;
-- NULL: from the start). Returns how many jobs it released or cancelled, the
-- last parent it looked at, and how many it looked at (fewer than %(scan)s:
-- the next round starts again from the beginning).
WITH RECURSIVE held AS MATERIALIZED (
    SELECT pg_try_advisory_xact_lock(sk_maintenance_lock_class(), 3) AS locked
),
parents AS (
    (SELECT e.after_id, 1 AS n
     FROM sk_task_after_t e
     WHERE (SELECT locked FROM held)
        AND (%(from)s::uuid IS NULL OR e.after_id > %(from)s::uuid)
     ORDER BY e.after_id
     LIMIT 1)
    UNION ALL
    SELECT (SELECT e.after_id FROM sk_task_after_t e
            WHERE e.after_id > p.after_id ORDER BY e.after_id LIMIT 1),
        p.n + 1
    FROM parents p
    WHERE p.after_id IS NOT NULL AND p.n < %(scan)s
),
seen AS MATERIALIZED (
    SELECT after_id, n FROM parents WHERE after_id IS NOT NULL
),
ended AS MATERIALIZED (
    SELECT ARRAY(
        SELECT s.after_id
        FROM seen s
        LEFT JOIN sk_task_results_t p ON p.task_id = s.after_id
        WHERE p.task_status IN (3, 6, 7)
            OR (p.task_id IS NULL
                AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = s.after_id))
    ) AS ids
)
SELECT CASE WHEN cardinality(x.ids) > 0 THEN sk_release_after(x.ids, false) ELSE 0 END AS changed,
    (SELECT s.after_id FROM seen s ORDER BY s.n DESC LIMIT 1) AS last_seen,
    (SELECT count(*) FROM seen)::integer AS seen
FROM ended x
