-- ops_breaker_state.sql with the breaker's row locked until the action commits
-- (a tick skips it meanwhile): the breaker an operator acts on, as it stands, with the jobs it holds back now and those of its type's queue it
-- holds back or would when open. No row: no such breaker (a key's row always
-- comes back, its id NULL, for a breaker not made yet).
WITH b AS (
    SELECT b.breaker_id, b.state, b.task_type, b.signature, b.term_path, b.term_value
    FROM sk_breakers_t b
    WHERE (%(breaker_id)s::bigint IS NOT NULL AND b.breaker_id = %(breaker_id)s::bigint)
        OR (%(breaker_id)s::bigint IS NULL AND b.task_type = %(task_type)s::varchar
            AND b.signature = %(signature)s::text
            AND coalesce(b.term_path, '{}'::text[]) = coalesce(%(term_path)s::text[], '{}'::text[])
            AND coalesce(b.term_value, '') = coalesce(%(term_value)s::text, ''))
    FOR UPDATE OF b
),
k AS (
    SELECT b.breaker_id, b.state, b.task_type, b.signature, b.term_path, b.term_value FROM b
    UNION ALL
    SELECT NULL, NULL, %(task_type)s::varchar, %(signature)s::text, %(term_path)s::text[],
        %(term_value)s::text
    WHERE %(breaker_id)s::bigint IS NULL AND NOT EXISTS (SELECT 1 FROM b)
)
SELECT k.breaker_id, k.state::integer AS state,
    (SELECT count(*) FROM sk_breaker_held_t h
     WHERE h.breaker_id = k.breaker_id AND h.canary_at IS NULL)::integer AS held,
    (SELECT count(*) FROM sk_tasks_queue_t q
     WHERE q.task_type = k.task_type
        AND sk_breaker_matches(k.term_path, k.term_value, k.signature, q.task_id, q.task_payload)
    )::integer AS would_hold,
    (SELECT count(*) FROM sk_tasks_queue_t q WHERE q.task_type = k.task_type)::integer AS waiting
FROM k
