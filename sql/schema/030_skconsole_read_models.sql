-- What the read models (skconsole.read) and operator actions (skconsole.ops)
-- need to stay fast on a big queue. Additive like 020: a nullable column, a
-- trigger that maintains it, functions and indexes; every statement can run
-- again over a complete schema and changes nothing.

-- The failure-group key of an error text. The reference implementation is
-- skconsole/core/signature.py (error_signature); this is its SQL twin, and a test
-- checks they agree.
--
-- The signature reads a bounded part of the text, so a huge error costs no
-- more than a big one (the regexes used to run over the whole naming line:
-- about 0.5 us a character, 20 s for a 40 MB one-line message). The same
-- definition as failures.py, lengths in characters:
--   1. the view (sk_error_signature_view): the text itself when it is at most
--      32,768 characters long; else its first 16,384 characters, a line break
--      and its last 16,384 characters, with one space before that tail when it
--      starts mid-line (the character before it is not a line break), so the
--      cut-off line reads as indented and never passes for a traceback header
--      or a traceback's exception line;
--   2. the naming line (sk_error_final_line) is found in the view, then cut to
--      its first 1,024 characters and stripped of trailing whitespace; only
--      that goes through the regexes (a signature keeps 300 characters).
-- A text of at most 32,768 characters whose naming line is at most 1,024
-- characters signs exactly as it did unbounded.
CREATE OR REPLACE FUNCTION sk_error_signature_view(error text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    n integer;
    tail text;
BEGIN
    -- a character takes at least a byte: most texts need no counting at all
    IF error IS NULL OR octet_length(error) <= 32768 THEN
        RETURN error;
    END IF;
    -- counting the characters of a huge text is its only cost here (one pass
    -- for length, one for substr: some 0.2 s for 40 MB, no regexes)
    n := length(error);
    IF n <= 32768 THEN
        RETURN error;
    END IF;
    tail := substr(error, n - 16384);  -- the tail and the character before it
    RETURN left(error, 16384)
        || CASE WHEN left(tail, 1) = E'\n' THEN E'\n' ELSE E'\n ' END
        || substr(tail, 2);
END;
$$;

-- An error stored in Stakhanovise.NET's QueuedTaskError shape, as a document;
-- NULL for any other text. The rule of skconsole/core/stored_error.py (parse_json):
-- at most 1,048,576 characters, a JSON object once leading whitespace is
-- skipped, with "Type" or "Message" among its keys, and each of "Type",
-- "Message" and "StackTrace" a string or null when present. Never raises: it
-- runs in the signature trigger, on a .NET application's writes too. From
-- PostgreSQL 16 pg_input_is_valid() tells a text that is not JSON; on 15 only a
-- failed cast in an EXCEPTION block does, a subtransaction, which PostgreSQL 15
-- refuses while a parallel plan runs ("cannot start subtransactions during a
-- parallel operation", seen on the failure groups of 5M results): there, this and
-- every function that calls it are PARALLEL UNSAFE (the end of this file).
CREATE OR REPLACE FUNCTION sk_error_json(error text)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    doc jsonb;
BEGIN
    IF error IS NULL OR left(ltrim(left(error, 4096), E' \t\r\n\f\x0B'), 1) <> '{'
        OR octet_length(error) > 4 * 1048576
        OR (octet_length(error) > 1048576 AND length(error) > 1048576) THEN
        RETURN NULL;
    END IF;
    IF current_setting('server_version_num')::integer >= 160000 THEN
        IF NOT pg_input_is_valid(error, 'jsonb') THEN
            RETURN NULL;
        END IF;
        doc := error::jsonb;
    ELSE
        BEGIN
            doc := error::jsonb;
        EXCEPTION WHEN others THEN
            RETURN NULL;
        END;
    END IF;
    IF jsonb_typeof(doc) <> 'object' OR NOT (doc ? 'Type' OR doc ? 'Message')
        OR coalesce(jsonb_typeof(doc -> 'Type'), 'null') NOT IN ('string', 'null')
        OR coalesce(jsonb_typeof(doc -> 'Message'), 'null') NOT IN ('string', 'null')
        OR coalesce(jsonb_typeof(doc -> 'StackTrace'), 'null') NOT IN ('string', 'null') THEN
        RETURN NULL;
    END IF;
    RETURN doc;
END;
$$;

-- The first non-blank line of a text, stripped ('' if none).
CREATE OR REPLACE FUNCTION sk_first_line(message text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce((SELECT btrim(l, E' \t\r\n\f\x0B')
        FROM unnest(string_to_array(message, E'\n')) WITH ORDINALITY AS t(l, i)
        WHERE btrim(l, E' \t\r\n\f\x0B') <> '' ORDER BY i LIMIT 1), '')
$$;

-- An error in the QueuedTaskError shape, as every statement of ours that writes
-- task_last_error stores it: a .NET consumer deserialises it when it dequeues
-- the job again, and plain text there stops its poller.
CREATE OR REPLACE FUNCTION sk_task_error(kind text, message text, stack_trace text DEFAULT NULL)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT json_build_object('Type', kind, 'Message', message, 'StackTrace', stack_trace)::text
$$;

-- The line that names the error. For QueuedTaskError JSON: "Type: first line
-- of Message". Otherwise read in the view: after the last Python traceback
-- header, the first unindented line (else the last non-blank line); without a
-- header, the first non-blank line (.NET puts "Type: message" before its stack
-- frames). At most 1,024 characters, stripped.
CREATE OR REPLACE FUNCTION sk_error_final_line(error text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    ws constant text := E' \t\r\n\f\x0B';
    doc jsonb := sk_error_json(error);
    lines text[];
    n integer;
    header_at integer := 0;
    line text;
    found text := '';
BEGIN
    IF error IS NULL THEN
        RETURN '';
    END IF;
    IF doc IS NOT NULL THEN
        line := sk_first_line(doc ->> 'Message');
        found := coalesce(doc ->> 'Type', '');
        IF found <> '' AND line <> '' THEN
            found := found || ': ' || line;
        ELSIF found = '' THEN
            found := line;
        END IF;
        RETURN rtrim(left(found, 1024), ws);
    END IF;
    lines := string_to_array(sk_error_signature_view(error), E'\n');
    n := coalesce(array_length(lines, 1), 0);
    FOR i IN 1 .. n LOOP
        lines[i] := rtrim(lines[i], ws);
        IF lines[i] = 'Traceback (most recent call last):' THEN
            header_at := i;
        END IF;
    END LOOP;
    IF header_at > 0 THEN
        FOR i IN header_at + 1 .. n LOOP
            IF lines[i] <> '' AND position(left(lines[i], 1) IN ws) = 0 THEN
                found := lines[i];
                EXIT;
            END IF;
        END LOOP;
    END IF;
    IF found = '' THEN
        -- the first non-blank line, or after a header without an unindented line the last
        found := coalesce((SELECT btrim(l, ws) FROM unnest(lines) WITH ORDINALITY AS t(l, i)
            WHERE btrim(l, ws) <> '' ORDER BY CASE WHEN header_at > 0 THEN -i ELSE i END
            LIMIT 1), '');
    END IF;
    RETURN rtrim(left(found, 1024), ws);
END;
$$;

-- The volatile parts of a message collapsed to placeholders, rule for rule as
-- normalize_message() in skconsole/core/signature.py.
CREATE OR REPLACE FUNCTION sk_error_normalize_message(message text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT btrim(
        regexp_replace(
        regexp_replace(
        regexp_replace(
        regexp_replace(
        regexp_replace(
        regexp_replace(
        regexp_replace(
        regexp_replace(message,
            '(?<![A-Za-z0-9_<>…])(''[^''\n<>]*''|"[^"\n<>]*"|`[^`\n<>]*`)(?![A-Za-z0-9_<>…])', '<str>', 'g'),
            '([A-Za-z][A-Za-z0-9+.\-]*://[A-Za-z0-9.\-]*)/[^ \t\r\n\f\v''"`<>()]*', '\1<path>', 'g'),
            '[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}', '<uuid>', 'g'),
            '0[xX][0-9A-Fa-f]+', '<hex>', 'g'),
            '(?<![A-Za-z0-9_])(?=[0-9A-Fa-f]*[0-9])(?=[0-9A-Fa-f]*[A-Fa-f])[0-9A-Fa-f]{8,}(?![A-Za-z0-9_])',
            '<hex>', 'g'),
            '(?<![A-Za-z0-9_.<>/:\\])([A-Za-z]:\\|~?/)[A-Za-z0-9_.\-~]+([\\/][A-Za-z0-9_.\-~]+)*[\\/]?',
            '<path>', 'g'),
            '[0-9]+(\.[0-9]+)?', '<n>', 'g'),
            '[ \t\r\n\f\v]+', ' ', 'g'),
        E' \t\r\n\f\x0B')
$$;

-- Any stored error in the QueuedTaskError shape: JSON as it is, a plain text
-- (written before schema 7) split at its naming line into type and message,
-- the whole text as its stack trace (when it holds more than that line). What
-- a job going back to the queue carries, so a .NET consumer can read it. The
-- naming line, and so the signature, stays what it was.
CREATE OR REPLACE FUNCTION sk_error_as_json(error text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    line text;
    typed text[];
BEGIN
    IF error IS NULL OR sk_error_json(error) IS NOT NULL THEN
        RETURN error;
    END IF;
    line := sk_error_final_line(error);
    typed := regexp_match(line, '^([A-Za-z_][A-Za-z0-9_.]*): (.*)$');
    RETURN sk_task_error(coalesce(typed[1], ''), coalesce(typed[2], line),
        CASE WHEN btrim(error, E' \t\r\n\f\x0B') <> line THEN error END);
END;
$$;

CREATE OR REPLACE FUNCTION sk_error_signature(error text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    line text := sk_error_final_line(error);
    typed text[];
    message text;
    signature text;
BEGIN
    IF line = '' THEN
        RETURN '(no error text)';
    END IF;
    typed := regexp_match(line, '^([A-Za-z_][A-Za-z0-9_.]*): (.*)$');
    IF typed IS NOT NULL THEN
        message := typed[2];
        IF message ~ '^(''[^''\n<>]*''|"[^"\n<>]*"|`[^`\n<>]*`)$' THEN
            message := substr(message, 2, length(message) - 2);
        END IF;
        signature := typed[1] || ': ' || sk_error_normalize_message(message);
    ELSE
        signature := sk_error_normalize_message(line);
    END IF;
    signature := btrim(regexp_replace(signature, '[ \t\r\n\f\v]+', ' ', 'g'), E' \t\r\n\f\x0B');
    IF signature = '' THEN
        RETURN '(no error text)';
    END IF;
    IF length(signature) > 300 THEN
        signature := left(signature, 299) || '…';
    END IF;
    RETURN signature;
END;
$$;

-- The signature is kept beside the error, so grouping thousands of failed
-- jobs is an index scan, not a regex chain per row. The trigger fires only
-- when the error text is written (failures, reaps), never on claims or
-- successes, so the hot path pays nothing; it also covers rows written by a
-- Stakhanovise.NET application sharing the database.
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_error_signature text;

CREATE OR REPLACE FUNCTION sk_task_results_set_signature()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    NEW.sk_error_signature := CASE WHEN NEW.task_last_error IS NOT NULL
                                   THEN sk_error_signature(NEW.task_last_error) END;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE TRIGGER sk_task_results_signature_on_insert
    BEFORE INSERT ON sk_task_results_t
    FOR EACH ROW WHEN (NEW.task_last_error IS NOT NULL)
    EXECUTE FUNCTION sk_task_results_set_signature();
CREATE OR REPLACE TRIGGER sk_task_results_signature_on_update
    BEFORE UPDATE OF task_last_error ON sk_task_results_t
    FOR EACH ROW WHEN (NEW.task_last_error IS DISTINCT FROM OLD.task_last_error)
    EXECUTE FUNCTION sk_task_results_set_signature();

-- Rows failed before the trigger existed (a Stakhanovise.NET database), and
-- QueuedTaskError JSON signed before the signature read that shape (every .NET
-- failure then signed alike): only failed rows matter to the groups, and a
-- later failure recomputes it anyway.
UPDATE sk_task_results_t
SET sk_error_signature = sk_error_signature(task_last_error)
WHERE task_status IN (4, 5, 6) AND task_last_error IS NOT NULL
    AND (sk_error_signature IS NULL
         OR (left(ltrim(left(task_last_error, 4096), E' \t\r\n\f\x0B'), 1) = '{'
             AND sk_error_signature IS DISTINCT FROM sk_error_signature(task_last_error)));

-- Failure groups, their drill-down, group selections and the failed line of
-- the history read only this small partial index (index-only once vacuumed).
CREATE INDEX IF NOT EXISTS idx_sk_task_results_failures
    ON sk_task_results_t (sk_error_signature, task_status, task_type)
    INCLUDE (task_processing_finalized_at_ts, task_last_processing_attempted_at_ts, task_id)
    WHERE task_status IN (4, 5, 6);

-- "Posted per minute" over the last hour.
CREATE INDEX IF NOT EXISTS idx_sk_task_results_posted
    ON sk_task_results_t (task_posted_at_ts);

-- PostgreSQL 15: the functions that read an error as JSON (sk_error_json and its
-- callers) may start a subtransaction, which no parallel plan may do (see
-- sk_error_json): they keep the planner from one. From 16 they stay PARALLEL SAFE.
DO $labels$
BEGIN
    IF current_setting('server_version_num')::integer < 160000 THEN
        ALTER FUNCTION sk_error_json(text) PARALLEL UNSAFE;
        ALTER FUNCTION sk_error_final_line(text) PARALLEL UNSAFE;
        ALTER FUNCTION sk_error_as_json(text) PARALLEL UNSAFE;
        ALTER FUNCTION sk_error_signature(text) PARALLEL UNSAFE;
    END IF;
END
$labels$;
