-- Make a breaker, or set the settings of the one of this type, signature and
-- payload term (150_skconsole_breakers.sql); its state is left as it is. The
-- breaker's id comes back.
INSERT INTO sk_breakers_t AS b (task_type, signature, term_path, term_value, threshold,
    window_s, cool_down_s, canaries)
VALUES (%(task_type)s, %(signature)s, %(term_path)s::text[], %(term_value)s, %(threshold)s,
    %(window_s)s, %(cool_down_s)s, %(canaries)s)
ON CONFLICT (task_type, signature, coalesce(term_path, '{}'::text[]), coalesce(term_value, ''))
DO UPDATE SET threshold = EXCLUDED.threshold, window_s = EXCLUDED.window_s,
    cool_down_s = EXCLUDED.cool_down_s, canaries = EXCLUDED.canaries
RETURNING b.breaker_id
