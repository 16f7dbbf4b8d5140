-- Lock the breaker an operator acts on (by id, or by type, signature and payload
-- term) until the action commits: a tick skips it meanwhile (SKIP LOCKED), another
-- operator's action waits. What it stands at is read next (ops_breaker_state.sql).
SELECT b.breaker_id
FROM sk_breakers_t b
WHERE (%(breaker_id)s::bigint IS NOT NULL AND b.breaker_id = %(breaker_id)s::bigint)
    OR (%(breaker_id)s::bigint IS NULL AND b.task_type = %(task_type)s::varchar
        AND b.signature = %(signature)s::text
        AND coalesce(b.term_path, '{}'::text[]) = coalesce(%(term_path)s::text[], '{}'::text[])
        AND coalesce(b.term_value, '') = coalesce(%(term_value)s::text, ''))
FOR UPDATE OF b
