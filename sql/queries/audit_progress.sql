-- One more batch of a running operator action, in that batch's own transaction:
-- the batch's changes are added to the count, so the count that is committed is
-- always the number of changes that are committed. No row: the caller stops
-- (and rolls the batch back) rather than change jobs with no audit.
UPDATE sk_audit_t SET audit_count = audit_count + %(changed)s, audit_details = %(details)s
WHERE audit_id = %(audit_id)s
RETURNING audit_count
