"""Job statuses as the tests read them back from the results table, by name.

The table stores Stakhanovise.NET's codes; these helpers hand them back as
:class:`~skconsole.core.status.JobStatus` members (an ``IntEnum``: ``JobStatus.FAULTED
== 5``), so a test compares against names and a failure shows names too. A code
that is no JobStatus (a foreign writer's) comes back as the plain number.
"""

from __future__ import annotations

from typing import Any

from skconsole.core.status import JobStatus


def named(code: int) -> JobStatus | int:
    """``code`` as its JobStatus, or the number itself when it is none."""
    try:
        return JobStatus(code)
    except ValueError:
        return int(code)


def status_of(conn: Any, task_id: Any) -> JobStatus | int | None:
    """The status of job ``task_id`` in sk_task_results_t; None when it has no row."""
    row = conn.execute(
        "SELECT task_status FROM sk_task_results_t WHERE task_id = %s", (task_id,)
    ).fetchone()
    return None if row is None else named(int(row[0]))


def status_counts(conn: Any, task_type: str | None = None) -> dict[JobStatus | int, int]:
    """Jobs per status in sk_task_results_t (of ``task_type`` only, when given)."""
    if task_type is None:
        rows = conn.execute(
            "SELECT task_status, count(*) FROM sk_task_results_t GROUP BY 1"
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT task_status, count(*) FROM sk_task_results_t WHERE task_type = %s GROUP BY 1",
            (task_type,),
        ).fetchall()
    return {named(int(s)): int(n) for s, n in rows}
