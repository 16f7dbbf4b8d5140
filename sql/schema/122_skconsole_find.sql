-- skconsole's search by payload (skconsole find, --where payload.PATH=VALUE):
-- functions only, naming no table (nothing for a --mapping to rewrite), every
-- statement re-runnable.
--
-- Payloads are text (Stakhanovise.NET's task_payload column), and a producer
-- may store text that is not JSON; a search must skip such a row, not fail on
-- it. From PostgreSQL 16, pg_input_is_valid() says so without an exception, so
-- the function is safe in a parallel plan (PL/pgSQL, not SQL: a SQL body's
-- CASE would not keep PostgreSQL 18 from folding the cast of a constant). On 15 only a text that opens like an
-- object or an array is cast (anything else has no path to search) and a failed
-- cast gives NULL through an EXCEPTION block, which costs a subtransaction per
-- call and must not run in a parallel plan (PostgreSQL refuses subtransactions
-- there: "cannot start subtransactions during a parallel operation", seen on
-- 1M results), so it is PARALLEL UNSAFE. IMMUTABLE either way (its answer
-- depends on its argument alone), so an operator's expression index may use it
-- (skconsole find-index add).
DO $setup$
BEGIN
    IF current_setting('server_version_num')::integer >= 160000 THEN
        EXECUTE $fn$
            CREATE OR REPLACE FUNCTION sk_try_jsonb(doc text)
            RETURNS jsonb
            LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
            AS $body$
            BEGIN
                IF doc IS NULL OR doc !~ '^\s*[\[{]' OR NOT pg_input_is_valid(doc, 'jsonb') THEN
                    RETURN NULL;
                END IF;
                RETURN doc::jsonb;
            END
            $body$
        $fn$;
    ELSE
        EXECUTE $fn$
            CREATE OR REPLACE FUNCTION sk_try_jsonb(doc text)
            RETURNS jsonb
            LANGUAGE plpgsql IMMUTABLE PARALLEL UNSAFE
            AS $body$
            BEGIN
                IF doc IS NULL OR doc !~ '^\s*[\[{]' THEN
                    RETURN NULL;
                END IF;
                RETURN doc::jsonb;
            EXCEPTION
                WHEN data_exception OR program_limit_exceeded THEN
                    RETURN NULL;
            END
            $body$
        $fn$;
    END IF;
END
$setup$;

-- Whether a payload matches every term of a --where list: a jsonb array of
-- {"path": ["customer", "id"], "value": "42"}, each compared with the field's
-- text (#>>: the number 42 and the string "42" both give '42'). NULL terms:
-- every payload matches. The queries call it only when terms are given
-- ("terms IS NULL OR ..." folds away otherwise) and put the first term beside
-- it as a plain expression an index on that path can serve.
CREATE OR REPLACE FUNCTION sk_payload_matches(payload text, terms jsonb)
RETURNS boolean
LANGUAGE sql IMMUTABLE
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
LANGUAGE sql IMMUTABLE
AS $$ SELECT path IS NULL OR (sk_try_jsonb(payload) #>> path) = value $$;
