-- skconsole's additive objects: writes several statements share, written once.
-- Functions only: every statement can run again and changes nothing. LANGUAGE
-- sql VOLATILE: never inlined, each is called once per statement with the rows
-- that statement chose (as arrays), and reads nothing else to choose them.
-- The worker's finish statements (finish_*.sql, hand_back.sql, reap.sql) write
-- their queue rows inline: their plans are held to the primary key under the
-- finish connection's settings, and they pay for no extra call.

-- Queue rows for jobs whose result rows the caller has just set to run again
-- (an operator's requeue, edit --requeue, the re-post of a hung job cancelled
-- while a keyed re-post waited: ops_requeue.sql, ops_edit.sql, ops_cancel.sql),
-- from the values given, due at due_ats. A job that has a queue row keeps it
-- as it is. Returns how many queue rows it inserted.
CREATE OR REPLACE FUNCTION sk_enqueue(task_ids uuid[], task_types text[], sources text[],
    payloads text[], priorities integer[], due_ats timestamptz[])
RETURNS integer
LANGUAGE sql VOLATILE
AS $$
    WITH queued AS (
        INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload,
            task_priority, task_posted_at_ts, task_locked_until_ts)
        SELECT x.task_id, x.task_type, x.task_source, x.task_payload, x.task_priority, now(),
            x.due_at
        FROM unnest(task_ids, task_types, sources, payloads, priorities, due_ats)
            AS x(task_id, task_type, task_source, task_payload, task_priority, due_at)
        ON CONFLICT (task_id) DO NOTHING
        RETURNING 1
    )
    SELECT count(*)::integer FROM queued
$$;

-- Delete final results the caller has chosen and locked (an operator's purge,
-- a retention round: ops_purge.sql, retention_purge.sql), re-checking that each
-- is still in one of the statuses given. Their attempts (sk_attempts_t,
-- 120_skconsole_attempts.sql) go with them; a succeeded job others wait for
-- (after=) has its success kept on their edges, so they are not cancelled for
-- a parent that is "gone" (130_skconsole_after.sql). Returns the rows deleted.
CREATE OR REPLACE FUNCTION sk_purge_results(task_ids uuid[], statuses integer[])
RETURNS TABLE (task_id uuid, task_status integer)
LANGUAGE sql VOLATILE
AS $$
    WITH gone AS (
        DELETE FROM sk_task_results_t r
        WHERE r.task_id = ANY(task_ids) AND r.task_status = ANY(statuses)
        RETURNING r.task_id, r.task_status
    ),
    attempts_gone AS (
        DELETE FROM sk_attempts_t a WHERE a.task_id IN (SELECT g.task_id FROM gone g)
    ),
    success_kept AS (
        UPDATE sk_task_after_t e SET after_succeeded = true
        FROM gone g WHERE e.after_id = g.task_id AND g.task_status = 3 AND NOT e.after_succeeded
    )
    SELECT g.task_id, g.task_status FROM gone g
$$;
