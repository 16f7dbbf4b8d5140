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

-- A payload value as an index holds it, bounded: itself up to 512 bytes, else
-- 'sha256:' and the SHA-256 of its UTF-8 bytes in hex (71 bytes). PostgreSQL
-- refuses a btree entry over 2,704 bytes, so a search index or a per-key
-- limit on the raw text would refuse the post (and the finish, and the reap)
-- of one job with a big value, and stop the queue. Equality stays exact: a
-- search compares sk_key() values (the index) and then the full texts
-- (sk_payload_term); a per-key limit counts by sk_key() values, so two keys
-- share a limit only if one is the other's digest text or their SHA-256
-- collide, which can only make the limit stricter, never looser. PL/pgSQL so
-- it is never inlined: an index on sk_key(...) and the queries' sk_key(...)
-- stay the same expression. NULL stays NULL.
CREATE OR REPLACE FUNCTION sk_key(k text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
AS $$
BEGIN
    IF octet_length(k) <= 512 THEN
        RETURN k;
    END IF;
    RETURN 'sha256:' || encode(sha256(convert_to(k, 'UTF8')), 'hex');
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
-- the path is a constant what is left is sk_key(sk_try_jsonb(payload) #>>
-- '{a,b}') = sk_key('v') (the very expression an index made by skconsole
-- find-index holds, whatever the value's size) and the exact comparison.
CREATE OR REPLACE FUNCTION sk_payload_term(payload text, path text[], value text)
RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT path IS NULL OR (sk_key(sk_try_jsonb(payload) #>> path) = sk_key(value)
        AND (sk_try_jsonb(payload) #>> path) = value)
$$;
