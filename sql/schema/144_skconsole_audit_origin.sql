-- skconsole's additive objects: which face an audit row's action came from (schema
-- version 9). audit_origin: 'cli' (a command), 'console' (a key in the console, in a
-- terminal or a browser tab), 'worker' (a worker's own housekeeping: retention
-- rounds), 'python' (skconsole.ops called from a program); skconsole.core.actor.Origin.
-- NULL on the rows written before it was recorded. Nullable and written by skconsole
-- alone: a Stakhanovise.NET application never reads the audit table. Re-runnable.
ALTER TABLE sk_audit_t ADD COLUMN IF NOT EXISTS audit_origin varchar(20);
