-- Every circuit breaker (150_skconsole_breakers.sql), with the jobs it holds back
-- now (parked, not released) and its current round's canaries: released, and
-- ended (their attempt after the release ended, or the job is gone).
SELECT b.breaker_id, b.task_type, b.signature, b.term_path, b.term_value, b.threshold,
    b.window_s, b.cool_down_s, b.canaries, b.state, b.state_at, b.opened_count, b.rounds, b.reason,
    b.created_at,
    extract(epoch FROM now() - b.state_at)::float8 AS state_age_s,
    CASE WHEN b.state = 1 THEN greatest(0, extract(epoch FROM
        b.state_at + make_interval(secs => b.cool_down_s) - now()))::float8 END
        AS half_open_in_s,
    coalesce(h.held, 0) AS held,
    coalesce(h.canaries_out, 0) AS canaries_out,
    coalesce(h.canaries_ended, 0) AS canaries_ended
FROM sk_breakers_t b
LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE x.canary_at IS NULL)::integer AS held,
        count(*) FILTER (WHERE x.canary_at IS NOT NULL)::integer AS canaries_out,
        count(*) FILTER (WHERE x.canary_at IS NOT NULL AND (r.task_id IS NULL
            OR r.task_status = 7 OR (r.task_status IN (3, 4, 5, 6)
                AND sk_last_run_at(r.task_processing_finalized_at_ts,
                    r.task_last_processing_attempted_at_ts) >= x.canary_at)))::integer
            AS canaries_ended
    FROM sk_breaker_held_t x
    LEFT JOIN sk_task_results_t r ON r.task_id = x.task_id
    WHERE x.breaker_id = b.breaker_id
) AS h ON true
WHERE %(task_type)s::varchar IS NULL OR b.task_type = %(task_type)s::varchar
ORDER BY b.state DESC, b.task_type, b.breaker_id
