-- skconsole's functions (named sk_*, in the schema its setup created them in),
-- as regprocedure text (an aggregate goes with its state function, CASCADE); Stakhanovise.NET's dequeue function only when asked.
SELECT p.oid::regprocedure::text
FROM pg_proc p
WHERE p.proname LIKE 'sk\_%%' AND p.prokind <> 'a' AND p.pronamespace = current_schema()::regnamespace
    AND (%(stakhanovise)s OR p.oid IS DISTINCT FROM to_regproc(%(dequeue)s)::oid)
ORDER BY p.proname, p.oid
