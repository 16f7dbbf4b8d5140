-- skconsole's search by payload (skconsole find, --where payload.PATH=VALUE):
-- functions only, naming no table (nothing for a --mapping to rewrite), every
-- statement re-runnable.
--
-- Payloads are text (Stakhanovise.NET's task_payload column), and a producer
-- may store text that is not JSON; a search must skip such a row, not fail on
-- it. pg_input_is_valid() would say so without an exception, but only from
-- PostgreSQL 16; this function works on every supported server: only a text
-- that opens like an object or an array is cast (anything else has no path to
-- search), and a failed cast gives NULL. IMMUTABLE (its answer depends on its
-- argument alone), so an operator's expression index may use it
-- (skconsole find-index add). An EXCEPTION block costs a subtransaction per
-- call: fine for a search bounded by type, an index for a frequent one.
CREATE OR REPLACE FUNCTION sk_try_jsonb(doc text)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
    IF doc IS NULL OR doc !~ '^\s*[\[{]' THEN
        RETURN NULL;
    END IF;
    RETURN doc::jsonb;
EXCEPTION
    WHEN data_exception OR program_limit_exceeded THEN
        RETURN NULL;
END
$$;

-- Whether a payload matches every term of a --where list: a jsonb array of
-- {"path": ["customer", "id"], "value": "42"}, each compared with the field's
-- text (#>>: the number 42 and the string "42" both give '42'). NULL terms:
-- every payload matches. The queries call it only when terms are given
-- ("terms IS NULL OR ..." folds away otherwise) and put the first term beside
-- it as a plain expression an index on that path can serve.
CREATE OR REPLACE FUNCTION sk_payload_matches(payload text, terms jsonb)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT terms IS NULL OR NOT EXISTS (
        SELECT 1
        FROM jsonb_array_elements(terms) AS t(term)
        WHERE (sk_try_jsonb(payload) #>> ARRAY(
                SELECT jsonb_array_elements_text(t.term -> 'path'))) IS DISTINCT FROM t.term ->> 'value')
$$;

-- One --where term as the queries write it: true when no term is given (path
-- NULL), else the field's text equals the value. Inlinable (one SELECT): once
-- the path is a constant what is left is sk_try_jsonb(payload) #>> '{a,b}' =
-- 'v', the very expression an index made by skconsole find-index holds.
CREATE OR REPLACE FUNCTION sk_payload_term(payload text, path text[], value text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT path IS NULL OR (sk_try_jsonb(payload) #>> path) = value $$;
