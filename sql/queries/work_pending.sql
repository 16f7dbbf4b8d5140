-- Is any job of these (unpaused) types eligible now or within the horizon? (--burst)
SELECT EXISTS (
    SELECT 1 FROM sk_tasks_queue_t
    WHERE task_type = ANY(ARRAY(
            SELECT unnest(%(types)s::varchar[])
            EXCEPT SELECT task_type FROM sk_task_types_t WHERE tt_paused))
        AND task_locked_until_ts < now() + %(horizon_s)s * interval '1 second'
)
