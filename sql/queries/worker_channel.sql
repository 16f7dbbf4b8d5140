-- The name of this worker's own channel (sql/schema/080_skconsole_cancel.sql).
SELECT sk_worker_channel(%(worker_id)s) AS channel
