"""A job by its id or a unique prefix of it, as an operator types it from a ticket.

A prefix is a range of the results' primary key (``ab12`` → from
``ab120000-0000-...`` to ``ab12ffff-ffff-...``), so the lookup is an index range
scan however many results there are; only the first few matches are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from skconsole.core.errors import ConfigError, SkconsoleError
from skconsole.core.status import JobStatus
from skconsole.core.text import quoted
from skconsole.read.query import Conn, fetch

#: the candidates an ambiguous prefix is answered with
CANDIDATES = 5
_HEX = re.compile(r"[0-9a-f]{1,32}")


class JobNotFoundError(SkconsoleError):
    """No job has that id, or several start with that prefix (exit code 1)."""


@dataclass(frozen=True)
class JobMatch:
    task_id: UUID
    task_type: str
    status: JobStatus
    posted_at: datetime | None


def prefix_range(text: str) -> tuple[UUID, UUID]:
    """The first and last id starting with ``text`` (hex digits; dashes and case ignored)."""
    digits = text.strip().lower().replace("-", "")
    if not _HEX.fullmatch(digits):
        raise ConfigError(
            f"a job id or prefix is 1 to 32 hexadecimal digits (dashes allowed), got {quoted(text)}"
        )
    return UUID(digits.ljust(32, "0")), UUID(digits.ljust(32, "f"))


def _match(*, status: int, **cols: Any) -> JobMatch:
    return JobMatch(status=JobStatus(status), **cols)


def jobs_with_prefix(conn: Conn, text: str, limit: int = CANDIDATES + 1) -> list[JobMatch]:
    """The first ``limit`` jobs (by id) whose id starts with ``text``."""
    low, high = prefix_range(text)
    return fetch(conn, "job_prefix", _match, {"low": low, "high": high, "limit": limit})


def resolve_job(conn: Conn, text: str) -> UUID:
    """The one job ``text`` names; a :class:`JobNotFoundError` naming a few candidates
    when several do, or saying so when none does."""
    found = jobs_with_prefix(conn, text)
    if len(found) == 1:
        return found[0].task_id
    if not found:
        raise JobNotFoundError(f"no job id starts with {quoted(text.strip())}")
    shown = ", ".join(
        f"{m.task_id} ({quoted(m.task_type)}, {m.status.label})" for m in found[:CANDIDATES]
    )
    more = " and more" if len(found) > CANDIDATES else ""
    raise JobNotFoundError(
        f"{quoted(text.strip())} matches several jobs: {shown}{more}; type more of the id"
    )
