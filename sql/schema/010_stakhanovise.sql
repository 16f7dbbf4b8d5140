-- Stakhanovise.NET's objects, created exactly as its own setup creates them:
-- the same tables, columns, constraint, index, sequence and function names (its
-- scripts under LVD.Stakhanovise.NET/Setup/BuiltInDbAssetsSetup/scripts), so
-- either side may set up first and both may run their setup again for ever.
-- Its setup runs at every start of a .NET application: it creates what is
-- missing, then drops and re-adds its primary keys by name; a key of another
-- name would make that fail ("multiple primary keys ... are not allowed").
-- Nothing is replaced that exists: not a table, not its dequeue function.
-- (With a QueuedTaskMapping, skconsole.db.mapping derives every name here from
-- the mapped table names, as .NET's setup does.)

-- Names skconsole gave these objects before schema 7 become .NET's names; an
-- index .NET's setup already made under its own name is not kept twice.
-- (The new names below are written as to_regclass reads them: a mapping
-- rewrites them into quoted identifiers, parse_ident() gives back the bare name.)
DO $rename$
DECLARE
    constraints constant text[][] := ARRAY[
        ['sk_tasks_queue_t', 'pk_tasks_queue_task_id', 'pk_sk_tasks_queue_t'],
        ['sk_tasks_queue_t', 'unq_tasks_queue_task_lock_handle_id',
            'unq_sk_tasks_queue_t_task_lock_handle_id'],
        ['sk_task_results_t', 'pk_task_results_task_id', 'pk_sk_task_results_t'],
        ['sk_metrics_t', 'pk_metrics_metric_id', 'pk_sk_metrics_t'],
        ['sk_task_execution_time_stats_t', 'pk_task_execution_time_stats',
            'pk_sk_task_execution_time_stats_t']];
    indexes constant text[][] := ARRAY[
        ['idx_tasks_queue_task_type_task_locked_until_ts', 'idx_sk_tasks_queue_t_filter_index'],
        ['idx_tasks_queue_sort_index', 'idx_sk_tasks_queue_t_sort_index'],
        ['idx_task_results_task_status', 'idx_sk_task_results_t_task_status'],
        ['idx_task_results_task_type', 'idx_sk_task_results_t_task_type'],
        ['idx_metrics_metric_category', 'idx_sk_metrics_t_category']];
    tbl regclass;
    new_name text;
BEGIN
    FOR i IN 1 .. array_length(constraints, 1) LOOP
        tbl := to_regclass(constraints[i][1]);
        new_name := (parse_ident(constraints[i][3]))[1];
        IF tbl IS NOT NULL
            AND EXISTS (SELECT 1 FROM pg_constraint
                        WHERE conrelid = tbl AND conname = constraints[i][2])
            AND NOT EXISTS (SELECT 1 FROM pg_constraint
                            WHERE conrelid = tbl AND conname = new_name)
        THEN
            EXECUTE format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I',
                tbl, constraints[i][2], new_name);
        END IF;
    END LOOP;
    FOR i IN 1 .. array_length(indexes, 1) LOOP
        IF to_regclass(indexes[i][1]) IS NOT NULL THEN
            IF to_regclass(indexes[i][2]) IS NULL THEN
                EXECUTE format('ALTER INDEX %I RENAME TO %I',
                    indexes[i][1], (parse_ident(indexes[i][2]))[1]);
            ELSE
                EXECUTE format('DROP INDEX %I', indexes[i][1]);
            END IF;
        END IF;
    END LOOP;
END
$rename$;

CREATE SEQUENCE IF NOT EXISTS sk_tasks_queue_t_task_lock_handle_id_seq
    START WITH 1 INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1 NO CYCLE;

CREATE TABLE IF NOT EXISTS sk_tasks_queue_t (
    task_id uuid NOT NULL,
    task_lock_handle_id bigint NOT NULL
        DEFAULT nextval('sk_tasks_queue_t_task_lock_handle_id_seq'::regclass),
    task_type character varying(250) NOT NULL,
    task_source character varying(250) NOT NULL,
    task_payload text,
    task_priority integer,
    task_posted_at_ts timestamp with time zone NOT NULL DEFAULT now(),
    task_locked_until_ts timestamp with time zone NOT NULL,
    CONSTRAINT pk_sk_tasks_queue_t PRIMARY KEY (task_id),
    CONSTRAINT unq_sk_tasks_queue_t_task_lock_handle_id UNIQUE (task_lock_handle_id)
);

CREATE INDEX IF NOT EXISTS idx_sk_tasks_queue_t_filter_index
    ON sk_tasks_queue_t (task_type, task_locked_until_ts);
CREATE INDEX IF NOT EXISTS idx_sk_tasks_queue_t_sort_index
    ON sk_tasks_queue_t (task_priority, task_locked_until_ts, task_lock_handle_id);

CREATE TABLE IF NOT EXISTS sk_task_results_t (
    task_id uuid NOT NULL,
    task_type character varying(250) NOT NULL,
    task_source character varying(250) NOT NULL,
    task_payload text,
    task_status integer NOT NULL,
    task_priority integer NOT NULL,
    task_last_error text,
    task_error_count integer NOT NULL DEFAULT 0,
    task_last_error_is_recoverable boolean NOT NULL DEFAULT false,
    task_processing_time_milliseconds bigint NOT NULL DEFAULT 0,
    task_posted_at_ts timestamp with time zone NOT NULL,
    task_first_processing_attempted_at_ts timestamp with time zone,
    task_last_processing_attempted_at_ts timestamp with time zone,
    task_processing_finalized_at_ts timestamp with time zone,
    CONSTRAINT pk_sk_task_results_t PRIMARY KEY (task_id)
);

CREATE INDEX IF NOT EXISTS idx_sk_task_results_t_task_status ON sk_task_results_t (task_status);
CREATE INDEX IF NOT EXISTS idx_sk_task_results_t_task_type ON sk_task_results_t (task_type);

CREATE TABLE IF NOT EXISTS sk_metrics_t (
    metric_id character varying(250) NOT NULL,
    metric_owner_process_id character varying(250) NOT NULL,
    metric_category character varying(150) NOT NULL,
    metric_value bigint NOT NULL DEFAULT 0,
    metric_last_updated timestamp with time zone NOT NULL DEFAULT now(),
    CONSTRAINT pk_sk_metrics_t PRIMARY KEY (metric_id, metric_owner_process_id)
);

CREATE INDEX IF NOT EXISTS idx_sk_metrics_t_category ON sk_metrics_t (metric_category);

CREATE TABLE IF NOT EXISTS sk_task_execution_time_stats_t (
    et_payload_type character varying(255) NOT NULL,
    et_owner_process_id character varying(255) NOT NULL,
    et_n_execution_cycles bigint NOT NULL,
    et_last_execution_time bigint NOT NULL,
    et_avg_execution_time bigint NOT NULL,
    et_fastest_execution_time bigint NOT NULL,
    et_longest_execution_time bigint NOT NULL,
    et_total_execution_time bigint NOT NULL,
    CONSTRAINT pk_sk_task_execution_time_stats_t PRIMARY KEY (et_payload_type, et_owner_process_id)
);

-- The dequeue function .NET consumers call (skconsole's workers claim with
-- their own statement). Created only when missing: an application's own
-- version is left as it is.
DO $dequeue$
BEGIN
    IF to_regprocedure(
        'sk_try_dequeue_task(character varying[], uuid[], timestamp with time zone)') IS NULL
    THEN
        CREATE FUNCTION sk_try_dequeue_task(
            select_types character varying[],
            exclude_ids uuid[],
            ref_now timestamp with time zone)
        RETURNS TABLE (
            task_id uuid,
            task_lock_handle_id bigint,
            task_type character varying,
            task_source character varying,
            task_payload text,
            task_priority integer,
            task_posted_at_ts timestamp with time zone,
            task_locked_until_ts timestamp with time zone)
        LANGUAGE plpgsql
        AS $fn$
        DECLARE
            n_select_types integer = cardinality(select_types);
        BEGIN
            RETURN QUERY
            WITH sk_dequeued_task AS (
                DELETE FROM sk_tasks_queue_t td WHERE td.task_id = (
                    SELECT t0.task_id
                    FROM sk_tasks_queue_t t0
                    WHERE (t0.task_type = ANY(select_types) OR n_select_types = 0)
                        AND t0.task_locked_until_ts < ref_now
                        AND t0.task_id <> ALL(exclude_ids)
                    ORDER BY t0.task_priority ASC,
                        t0.task_locked_until_ts ASC,
                        t0.task_lock_handle_id ASC
                    LIMIT 1
                    FOR UPDATE SKIP LOCKED
                ) RETURNING *)
            SELECT sdt.* FROM sk_dequeued_task sdt;
        END;
        $fn$;
    END IF;
END
$dequeue$;
