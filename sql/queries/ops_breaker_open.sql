-- Open a breaker by hand: it holds back from now on, parks what it can
-- (sk_breaker_open, 150_skconsole_breakers.sql); the jobs parked come back.
SELECT sk_breaker_open(%(id)s, %(reason)s, %(scan)s) AS parked
