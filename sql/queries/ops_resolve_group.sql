-- The signature of the failure group whose short id is given (the id shown
-- by `skconsole status failures`: see skconsole.read.failures.group_id).
SELECT DISTINCT sk_signature_key(r.sk_error_signature) AS signature
FROM sk_task_results_t r
WHERE r.task_status IN (4, 5, 6)
    AND left(md5(sk_signature_key(r.sk_error_signature)), 12) = %(group_id)s
