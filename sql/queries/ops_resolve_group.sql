-- The signature of the failure group whose short id is given (the id shown
-- by `skconsole status failures`: see skconsole.read.stats.group_id).
SELECT DISTINCT coalesce(r.sk_error_signature, '(no error text)') AS signature
FROM sk_task_results_t r
WHERE r.task_status IN (4, 5, 6)
    AND left(md5(coalesce(r.sk_error_signature, '(no error text)')), 12) = %(group_id)s
