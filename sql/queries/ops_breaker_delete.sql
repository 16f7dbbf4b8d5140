-- Remove a breaker (closed first by ops_breaker_close.sql, in the same transaction).
DELETE FROM sk_breakers_t WHERE breaker_id = %(id)s
