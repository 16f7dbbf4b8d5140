-- The result row an edit may change, locked before anything is decided (SKIP
-- LOCKED: one another transaction is changing right now is left alone). A
-- statement of its own, in the edit's transaction: the edit that follows
-- (ops_edit.sql) takes its snapshot once the row is ours, so its status and
-- whether the job waits in the queue come from the row as it now stands. In
-- one statement, a requeue or a keyed re-post committing between the
-- statement's snapshot and its lock moved the job to the queue unseen: the
-- result row was edited, the queue row, posted by the other, ran the old
-- payload.
SELECT r.task_id
FROM sk_task_results_t r
WHERE r.task_id = ANY(%(ids)s::uuid[])
    AND r.task_status = ANY(%(statuses)s::integer[])
    AND (%(task_type)s::text IS NULL OR r.task_type = %(task_type)s::text)
FOR UPDATE SKIP LOCKED
