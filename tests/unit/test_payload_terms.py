"""Parsing --where payload.PATH=VALUE and the console's search line (no database)."""

from __future__ import annotations

from uuid import UUID

import pytest

from skconsole.core.errors import ConfigError
from skconsole.core.find_query import FindQuery, parse_line
from skconsole.core.payload_terms import MAX_TERMS, PayloadTerm, parse_term, parse_terms
from skconsole.core.status import JobStatus


def test_a_term_splits_at_the_first_equals_sign() -> None:
    assert parse_term("payload.customer.id=42") == PayloadTerm(("customer", "id"), "42")
    assert parse_term("payload.expr=a=b") == PayloadTerm(("expr",), "a=b")
    assert parse_term("payload.empty=") == PayloadTerm(("empty",), "")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("customer.id=42", "write payload.KEY"),
        ("payload.=1", "write payload.KEY"),
        ("payload.a..b=1", "empty key"),
        ("payload.a.=1", "empty key"),
        ("payload.a", "write payload.PATH=VALUE"),
        ("payload.a=\x00", "NUL"),
    ],
)
def test_a_bad_term_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_term(text)


def test_terms_drop_duplicates_and_are_bounded() -> None:
    assert len(parse_terms(["payload.a=1", "payload.a=1"])) == 1
    with pytest.raises(ConfigError, match=f"at most {MAX_TERMS}"):
        parse_terms([f"payload.k{i}=1" for i in range(MAX_TERMS + 1)])


def test_a_term_records_itself_as_typed() -> None:
    term = parse_term("payload.customer.id=42")
    assert term.as_json() == {"path": "payload.customer.id", "value": "42"}
    assert str(term) == "payload.customer.id=42"


def test_the_search_line_reads_every_kind_of_term() -> None:
    q = parse_line('payload.a.b=1 type=t.x status=4 status=5 since=1h error="timed out" limit=9')
    assert q == FindQuery(
        where=(PayloadTerm(("a", "b"), "1"),),
        task_type="t.x",
        statuses=(JobStatus.ERROR, JobStatus.FAULTED),
        since_seconds=3600.0,
        error="timed out",
        limit=9,
    )
    assert parse_line(q.describe()) == q


def test_the_search_line_names_jobs_by_id_parent_and_group() -> None:
    a, b = "6f1c2b1e-0000-4000-8000-000000000001", "6f1c2b1e-0000-4000-8000-000000000002"
    q = parse_line(f"id={a} id={b} id={a} parent={b} group='app.Timeout: timed out <n>'")
    assert q == FindQuery(
        ids=(UUID(a), UUID(b)), parent=UUID(b), group="app.Timeout: timed out <n>"
    )
    assert parse_line(q.describe()) == q


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("customer=4", "unknown search term"),
        ("type=a type=b", "given twice"),
        ("status=x", "whole number"),
        ("status=9", "unknown status"),
        ("limit=0", "--limit must be between"),
        ('error="open', "cannot read the search"),
        ("since=forever", "invalid duration"),
        ("id=25ba7073", "whole job id"),
        ("parent=nope", "whole job id"),
    ],
)
def test_a_bad_search_line_is_a_clear_error(line: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_line(line)
