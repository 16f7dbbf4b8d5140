-- One pass of every breaker that may have something to do (sk_breaker_tick(),
-- 150_skconsole_breakers.sql): what changed, one row per breaker.
SELECT t.breaker_id, t.task_type, t.was, t.state, t.parked, t.released, t.reason
FROM sk_breaker_tick(%(scan)s) AS t
