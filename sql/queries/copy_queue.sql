-- Bulk post, part 2: the queue rows of the same jobs; the lock handle comes
-- from its sequence, as in every other post.
COPY sk_tasks_queue_t (
    task_id, task_type, task_source, task_payload, task_priority,
    task_posted_at_ts, task_locked_until_ts)
FROM STDIN (FORMAT BINARY)
