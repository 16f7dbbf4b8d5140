-- Stakhanovise.NET objects, default names, exactly as its setup creates them.
-- Every statement is "if not exists" so a database that Stakhanovise.NET
-- already set up is left as it is.

CREATE SEQUENCE IF NOT EXISTS sk_tasks_queue_t_task_lock_handle_id_seq
    AS bigint START WITH 1 INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1;

CREATE TABLE IF NOT EXISTS sk_tasks_queue_t (
    task_id uuid NOT NULL,
    task_lock_handle_id bigint NOT NULL
        DEFAULT nextval('sk_tasks_queue_t_task_lock_handle_id_seq'::regclass),
    task_type character varying(250) NOT NULL,
    task_source character varying(250) NOT NULL,
    task_payload text,
    task_priority integer NOT NULL,
    task_posted_at_ts timestamp with time zone NOT NULL DEFAULT now(),
    task_locked_until_ts timestamp with time zone NOT NULL,
    CONSTRAINT pk_tasks_queue_task_id PRIMARY KEY (task_id),
    CONSTRAINT unq_tasks_queue_task_lock_handle_id UNIQUE (task_lock_handle_id)
);

CREATE INDEX IF NOT EXISTS idx_tasks_queue_task_type_task_locked_until_ts
    ON sk_tasks_queue_t (task_type, task_locked_until_ts);
CREATE INDEX IF NOT EXISTS idx_tasks_queue_sort_index
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
    CONSTRAINT pk_task_results_task_id PRIMARY KEY (task_id)
);

CREATE INDEX IF NOT EXISTS idx_task_results_task_status ON sk_task_results_t (task_status);
CREATE INDEX IF NOT EXISTS idx_task_results_task_type ON sk_task_results_t (task_type);

CREATE TABLE IF NOT EXISTS sk_metrics_t (
    metric_id character varying(250) NOT NULL,
    metric_owner_process_id character varying(250) NOT NULL,
    metric_category character varying(150) NOT NULL,
    metric_value bigint NOT NULL DEFAULT 0,
    metric_last_updated timestamp with time zone NOT NULL DEFAULT now(),
    CONSTRAINT pk_metrics_metric_id PRIMARY KEY (metric_id, metric_owner_process_id)
);

CREATE INDEX IF NOT EXISTS idx_metrics_metric_category ON sk_metrics_t (metric_category);

CREATE TABLE IF NOT EXISTS sk_task_execution_time_stats_t (
    et_payload_type character varying(255) NOT NULL,
    et_owner_process_id character varying(255) NOT NULL,
    et_n_execution_cycles bigint NOT NULL,
    et_last_execution_time bigint NOT NULL,
    et_avg_execution_time bigint NOT NULL,
    et_fastest_execution_time bigint NOT NULL,
    et_longest_execution_time bigint NOT NULL,
    et_total_execution_time bigint NOT NULL,
    CONSTRAINT pk_task_execution_time_stats PRIMARY KEY (et_payload_type, et_owner_process_id)
);

CREATE OR REPLACE FUNCTION sk_try_dequeue_task(
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
AS $$
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
$$;
