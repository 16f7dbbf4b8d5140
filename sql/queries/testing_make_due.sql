-- skconsole.testing.make_due: waiting jobs (of some types) claimable now
UPDATE sk_tasks_queue_t SET task_locked_until_ts = now() - interval '1 millisecond'
WHERE task_locked_until_ts >= now()
    AND (%(types)s::text[] IS NULL OR task_type = ANY(%(types)s::text[]))
