-- When each failure signature of %(signatures)s first failed, as far back as the
-- per-minute record (146_skconsole_record.sql) goes: the oldest minute of its
-- signature rows (a signature row counts only that signature's failures), in the
-- rolled minutes and in those no upkeep has rolled yet. The record outlives the
-- job rows (a purge deletes them, not it), so this can be older than the oldest
-- failed job a group still holds. The rolled rows are read at their finest grain
-- (1: a minute each; a coarser row starts before the minute it holds).
SELECT s.signature, min(s.minute) AS first_seen
FROM (
    SELECT r.signature, r.minute FROM sk_record_t r
    WHERE r.grain = 1 AND r.signature = ANY(%(signatures)s::text[])
    UNION ALL
    SELECT f.signature, f.minute FROM sk_record_fresh_t f
    WHERE f.signature = ANY(%(signatures)s::text[])
) s
GROUP BY s.signature
