"""Assert what was posted: by type, by a subset of the payload, by status.

Code under test posts jobs (a web handler, a job posting its follow-ups); a
test wants to know that the right job was posted without running it. These
read every job the database holds, whatever its status, so a job already run
still counts as posted (filter with ``status`` to tell them apart).

Payload matching is by subset, so a test names only the keys it cares about:
every key of the expected dict must be in the payload with a matching value,
nested dicts matching the same way; lists match element by element (same
length); anything else must be equal, and a JSON ``true`` is never taken for
``1`` (nor ``false`` for ``0``), as Python's ``==`` would.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from skconsole.core.errors import ConfigError
from skconsole.core.status import JobStatus
from skconsole.core.text import printable
from skconsole.db.connect import Database
from skconsole.db.sqlfiles import query
from skconsole.testing.results import (
    LISTED,
    JobResult,
    by_posting,
    connect,
    listing,
    read_jobs,
    shorten,
)

StatusFilter = JobStatus | int | Iterable[JobStatus | int] | None


def payload_matches(actual: Any, expected: Any) -> bool:
    """``actual`` holds ``expected``: dicts by subset (recursively), lists element
    by element, other values by equality with bools kept apart from numbers."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and payload_matches(actual[key], value) for key, value in expected.items()
        )
    if isinstance(expected, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(expected)
            and all(payload_matches(a, e) for a, e in zip(actual, expected, strict=True))
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return bool(actual == expected)


def _statuses(status: StatusFilter) -> list[int] | None:
    if status is None:
        return None
    if isinstance(status, int):
        return [int(status)]
    codes = [int(s) for s in status]
    if not codes:
        raise ConfigError("status is empty: name at least one status, or pass None")
    return codes


def posted(
    db: Database | str,
    task_type: str | None = None,
    payload: Any = None,
    status: StatusFilter = None,
) -> list[JobResult]:
    """The jobs posted (of ``task_type``, whose payload holds ``payload``, in
    ``status``: one or several), oldest post first."""
    with connect(db) as conn:
        jobs = read_jobs(
            conn, types=[task_type] if task_type is not None else None, statuses=_statuses(status)
        )
    if payload is not None:
        jobs = [j for j in jobs if j.payload_is_json and payload_matches(j.payload, payload)]
    return by_posting(jobs)


def assert_posted(
    db: Database | str,
    task_type: str,
    payload: Any = None,
    *,
    count: int | None = None,
    status: StatusFilter = None,
) -> list[JobResult]:
    """The matching jobs (as :func:`posted`); AssertionError unless there is at
    least one (``count``: exactly that many). The message lists what was posted
    of ``task_type``, or, if nothing was, which types were."""
    __tracebackhide__ = True
    if count is not None and count < 0:
        raise ConfigError(f"count must not be negative, got {count}")
    found = posted(db, task_type, payload, status)
    if (count is None and found) or (count is not None and len(found) == count):
        return found
    wanted = "a job" if count is None else f"{count} job(s)"
    head = f"expected {wanted} {_criteria(task_type, payload, status)} to be posted, found {len(found)}"
    raise AssertionError(head + "\n" + _what_was_posted(db, task_type))


def assert_not_posted(
    db: Database | str,
    task_type: str,
    payload: Any = None,
    *,
    status: StatusFilter = None,
) -> None:
    """AssertionError if any job matches (as :func:`posted`); the message lists them."""
    __tracebackhide__ = True
    found = posted(db, task_type, payload, status)
    if found:
        raise AssertionError(
            f"expected no job {_criteria(task_type, payload, status)} to be posted, "
            f"found {len(found)}:\n{listing(found)}"
        )


def make_due(db: Database | str, task_type: str | Iterable[str] | None = None) -> int:
    """Make every waiting job (of these types) claimable now; returns how many changed.

    A test's way past a delay or a retry's back-off without sleeping through it:
    the next run claims them. Only the time a job may run changes.
    """
    types = [task_type] if isinstance(task_type, str) else task_type
    with connect(db) as conn:
        cur = conn.execute(
            query("testing_make_due"), {"types": list(types) if types is not None else None}
        )
        return cur.rowcount


def _criteria(task_type: str, payload: Any, status: StatusFilter) -> str:
    parts = [f"of type {printable(repr(task_type))}"]
    if payload is not None:
        try:
            text = json.dumps(payload, ensure_ascii=False, separators=(", ", ": "))
        except (TypeError, ValueError):
            text = repr(payload)
        parts.append(f"with a payload holding {shorten(printable(text), 300)}")
    codes = _statuses(status)
    if codes is not None:
        parts.append("in status " + " or ".join(f"{c} {JobStatus.label_of(c)}" for c in codes))
    return " ".join(parts)


def _what_was_posted(db: Database | str, task_type: str) -> str:
    """What a failed assertion shows: the jobs of that type, or the types posted."""
    of_type = posted(db, task_type)
    if of_type:
        return f"posted of type {printable(repr(task_type))} ({len(of_type)}):\n" + listing(
            of_type, LISTED
        )
    everything = posted(db)
    if not everything:
        return "no job was posted at all"
    counts = Counter(j.task_type for j in everything)
    listed = ", ".join(f"{printable(t)} ({n})" for t, n in sorted(counts.items())[:LISTED])
    more = f", ... and {len(counts) - LISTED} more types" if len(counts) > LISTED else ""
    return f"no job of type {printable(repr(task_type))} was posted; types posted: {listed}{more}"
