-- A step read what the current wave's jobs came to and found them not all finished:
-- say when, under the plan's row lock, so the workers look again only a while later
-- (waves_open.sql), however many of them there are.
UPDATE sk_wave_plans_t SET checked_at_ts = now()
WHERE plan_id = %(plan_id)s
RETURNING plan_id
