-- The end of an operator action (done, or interrupted): its final details. The
-- count is left as the batches' transactions committed it.
UPDATE sk_audit_t SET audit_details = %(details)s
WHERE audit_id = %(audit_id)s
RETURNING audit_count
