-- Close a breaker by hand: its held jobs get their due times back
-- (sk_breaker_close, 150_skconsole_breakers.sql); how many come back.
SELECT sk_breaker_close(%(id)s, %(reason)s) AS given_back
