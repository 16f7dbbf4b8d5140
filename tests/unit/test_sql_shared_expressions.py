"""The expressions many queries share are written once, in 110_skconsole_shared.sql
(no database): the queries call them instead of copying them, and the few that cannot
(they run on Stakhanovise.NET's tables alone, where the functions do not exist) spell
out exactly the same expression."""

from __future__ import annotations

import re

from skconsole.core.signature import NO_ERROR
from skconsole.db.sqlfiles import QUERIES, sql_root

SHARED = (sql_root() / "schema" / "110_skconsole_shared.sql").read_text(encoding="utf-8")
#: an operator selection: a filter and the two sets of jobs it selects
SELECTION = (sql_root() / "schema" / "140_skconsole_selection.sql").read_text(encoding="utf-8")
#: the queries a database without skconsole's objects runs (read degraded)
DEGRADED = ("history", "failures_scan_compat", "record_compat")

LAST_RUN = re.compile(
    r"coalesce\(\s*r\.task_processing_finalized_at_ts\s*,\s*r\.task_last_processing_attempted_at_ts"
)
SIGNATURE_FILTER = re.compile(r"'\(no error text\)'|sk_error_signature\s+IS\s+NULL", re.IGNORECASE)


def _body(function: str) -> str:
    m = re.search(rf"FUNCTION {function}\(.*?AS \$\$(.*?)\$\$", SHARED, re.DOTALL)
    assert m, function
    return " ".join(m.group(1).split())


def test_no_query_copies_the_last_activity_expression() -> None:
    copies = sorted(n for n, text in QUERIES.items() if LAST_RUN.search(text))
    assert copies == sorted(DEGRADED), "call sk_last_run_at() / sk_last_activity_at() instead"


def test_the_degraded_queries_spell_out_what_sk_last_run_at_computes() -> None:
    assert _body("sk_last_run_at") == "SELECT coalesce(finalized, attempted)"
    spelled = "coalesce(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts)"
    for name in DEGRADED:
        assert spelled in QUERIES[name], name


def test_no_query_copies_the_signature_filter_or_key() -> None:
    """The group key of a failure without signature, and the filter on it, are
    sk_signature_key() and sk_signature_matches(). (failure_groups' sample probe looks
    for a NULL signature itself, so that it stays one index probe per group.)"""
    copies = sorted(n for n, text in QUERIES.items() if SIGNATURE_FILTER.search(text))
    assert copies == ["failure_groups"]


def test_the_group_key_of_a_failure_without_signature_is_pythons() -> None:
    assert f"'{NO_ERROR}'" in _body("sk_signature_key")
    assert f"'{NO_ERROR}'" in _body("sk_signature_matches")


def test_the_shared_functions_can_be_inlined() -> None:
    """A LANGUAGE sql function PostgreSQL inlines: one SELECT of an expression, IMMUTABLE,
    not STRICT, no SET, not SECURITY DEFINER (else it would be called per row, and an
    index on the column it reads would not be used)."""
    heads = re.findall(r"CREATE OR REPLACE FUNCTION (\w+)\((.*?)AS \$\$", SHARED, re.DOTALL)
    assert {name for name, _ in heads} == {
        "sk_last_run_at",
        "sk_last_activity_at",
        "sk_signature_key",
        "sk_signature_matches",
        "sk_rerun_value",
    }
    for name, head in heads:
        assert "LANGUAGE sql IMMUTABLE" in head, name
        for spoiler in ("STRICT", "SECURITY DEFINER", " SET "):
            assert spoiler not in head.upper(), name
        assert _body(name).startswith("SELECT ") and " FROM " not in _body(name), name


def test_the_selection_functions_can_be_inlined() -> None:
    """The operator selection's filter (an expression) and its two sets of jobs (a
    SELECT each, inlined into the query's FROM): LANGUAGE sql, not volatile, not STRICT,
    no SET, not SECURITY DEFINER, one statement."""
    heads = re.findall(
        r"CREATE OR REPLACE FUNCTION (\w+)\((.*?)AS \$\$(.*?)\$\$", SELECTION, re.DOTALL
    )
    assert {name for name, _, _ in heads} == {
        "sk_selected",
        "sk_waiting_selection",
        "sk_result_selection",
    }
    for name, head, body in heads:
        assert "LANGUAGE sql IMMUTABLE" in head or "LANGUAGE sql STABLE" in head, name
        for spoiler in ("STRICT", "SECURITY DEFINER", " SET ", "VOLATILE"):
            assert spoiler not in head.upper(), name
        assert body.strip().startswith("SELECT ") and ";" not in body, name


def test_no_query_spells_out_an_operator_selection() -> None:
    """The previews, counts and purges call sk_selected() (or a selection built on it)
    rather than repeating its filters."""
    payload_filters = sorted(n for n, text in QUERIES.items() if "sk_payload_term" in text)
    # a search of its own, and the hung jobs (in flight, not in a failure group)
    assert payload_filters == ["find_jobs", "ops_select_hung"]
