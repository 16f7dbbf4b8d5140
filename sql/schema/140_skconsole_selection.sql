-- skconsole's additive objects: an operator selection, written once. Functions
-- only: every statement can run again and changes nothing. After 122 (the
-- --where terms' functions, which they call).
--
-- Both are LANGUAGE sql with one SELECT and not STRICT, so PostgreSQL inlines
-- them before planning, as it does 110_skconsole_shared.sql's: a filter given
-- as NULL folds away, an index on a filtered column serves as if the query
-- spelled the filter out (tests/db/test_shared_sql.py reads the plans).

-- Whether one job is in an operator selection (requeue, purge, edit, bump,
-- cancel: the previews, the counts, and the writes that re-check each job):
-- its status is among those asked, and every other filter given matches: its
-- id, its type, its failure group (sk_signature_matches; has_result false: a
-- queue row without a result row, in no group), the --where terms on its
-- payload (the first as an indexable term, the rest as a list), and its last
-- activity (the caller says which instant that is) before the cutoff. A NULL
-- filter matches every job.
CREATE OR REPLACE FUNCTION sk_selected(
    task_id uuid, status integer, task_type text, signature text, has_result boolean,
    payload text, last_activity timestamptz,
    statuses integer[], ids uuid[], wanted_type text, wanted_signature text,
    where_path text[], where_value text, where_rest jsonb, cutoff timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT status = ANY(statuses)
        AND (ids IS NULL OR task_id = ANY(ids))
        AND (wanted_type IS NULL OR task_type = wanted_type)
        AND sk_signature_matches(signature, wanted_signature, has_result)
        AND sk_payload_term(payload, where_path, where_value)
        AND (where_rest IS NULL OR sk_payload_matches(payload, where_rest))
        AND (cutoff IS NULL OR last_activity < cutoff)
$$;

-- The waiting jobs an operator selection matches (bump, and cancel with the
-- running ones beside them: ops_select_queued.sql, ops_select_cancellable.sql),
-- as the previews list them: queue rows, with their result row's status (1
-- Unprocessed when a hand-posted row has none) and age by last activity; and
-- fan-in jobs waiting for others (after=: 1 Unprocessed, no queue row yet,
-- their edges), aged by when they were posted.
CREATE OR REPLACE FUNCTION sk_waiting_selection(
    statuses integer[], ids uuid[], wanted_type text, wanted_signature text,
    where_path text[], where_value text, where_rest jsonb, cutoff timestamptz)
RETURNS TABLE (task_id uuid, task_type text, status integer, priority integer,
    error_count integer, at timestamptz, note text)
LANGUAGE sql STABLE
AS $$
    SELECT q.task_id, q.task_type::text, coalesce(r.task_status, 1), q.task_priority,
        coalesce(r.task_error_count, 0),
        sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
            coalesce(r.task_posted_at_ts, q.task_posted_at_ts)),
        r.sk_error_signature
    FROM sk_tasks_queue_t q
    LEFT JOIN sk_task_results_t r ON r.task_id = q.task_id
    WHERE sk_selected(q.task_id, coalesce(r.task_status, 1), q.task_type, r.sk_error_signature,
        r.task_id IS NOT NULL, q.task_payload,
        sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
            coalesce(r.task_posted_at_ts, q.task_posted_at_ts)),
        statuses, ids, wanted_type, wanted_signature, where_path, where_value, where_rest, cutoff)
    UNION ALL
    SELECT r.task_id, r.task_type::text, r.task_status, r.task_priority, r.task_error_count,
        r.task_posted_at_ts, 'waits for ' || cardinality(r.sk_after_ids) || ' job(s) (after=)'
    FROM sk_task_results_t r
    WHERE r.task_id IN (SELECT e.task_id FROM sk_task_after_t e)
        AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id)
        AND sk_selected(r.task_id, r.task_status, r.task_type, r.sk_error_signature, true,
            r.task_payload, r.task_posted_at_ts,
            statuses, ids, wanted_type, wanted_signature, where_path, where_value, where_rest, cutoff)
$$;

-- The result rows an operator selection matches (requeue, purge, edit: the
-- previews and purge's count, ops_select_results.sql, ops_count_results.sql),
-- as the previews list them: aged by last activity (finalized, else last
-- attempt, else posted). ops_purge.sql, which locks what it deletes, calls
-- sk_selected() on the table itself.
CREATE OR REPLACE FUNCTION sk_result_selection(
    statuses integer[], ids uuid[], wanted_type text, wanted_signature text,
    where_path text[], where_value text, where_rest jsonb, cutoff timestamptz)
RETURNS TABLE (task_id uuid, task_type text, status integer, priority integer,
    error_count integer, at timestamptz, note text)
LANGUAGE sql STABLE
AS $$
    SELECT r.task_id, r.task_type::text, r.task_status, r.task_priority, r.task_error_count,
        sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
            r.task_posted_at_ts),
        r.sk_error_signature
    FROM sk_task_results_t r
    WHERE sk_selected(r.task_id, r.task_status, r.task_type, r.sk_error_signature, true,
        r.task_payload,
        sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
            r.task_posted_at_ts),
        statuses, ids, wanted_type, wanted_signature, where_path, where_value, where_rest, cutoff)
$$;
