-- Wake the workers once for a whole bulk post (delivered when it commits).
SELECT pg_notify('sk_task_queue_item_added', '')
