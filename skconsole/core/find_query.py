"""What a search for jobs asks: payload terms, type, statuses, age, error text, a limit.

Why here: ``skconsole find`` builds it from options, the console's search screen
from one typed line (``payload.customer.id=42 type=invoices.send status=4 since=1h
error="timed out"``), and the read model runs it; one checked value for all three.
A search is bounded: by a type, an age, or its limit (50 unless told, at most
MAX_LIMIT), and the read runs under a statement timeout.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from uuid import UUID

from skconsole.core.durations import parse_duration
from skconsole.core.errors import ConfigError
from skconsole.core.payload_terms import MAX_TERMS, PREFIX, PayloadTerm, parse_term
from skconsole.core.status import JobStatus
from skconsole.core.text import is_valid_utf8, quoted

DEFAULT_LIMIT = 50
MAX_LIMIT = 10_000
#: Longest --error text searched for.
MAX_ERROR_TEXT = 1_000

_KEYS = ("type", "status", "since", "error", "limit", "id", "parent", "group", "after")
#: Most ids one search names (an audit row keeps 100 of a big selection's).
MAX_IDS = 100


@dataclass(frozen=True, slots=True)
class FindQuery:
    """A search; every given filter must match. ``since_seconds``: posted at most this long ago."""

    where: tuple[PayloadTerm, ...] = ()
    task_type: str | None = None
    statuses: tuple[int, ...] = ()
    since_seconds: float | None = None
    error: str | None = None
    limit: int = DEFAULT_LIMIT
    #: only these jobs (an audit row's, a marked list's)
    ids: tuple[UUID, ...] = ()
    #: only the jobs this job posted (its pipeline's next stage, its ctx.post jobs)
    parent: UUID | None = None
    #: only the jobs of this failure group (its signature, as the failures panel keys it)
    group: str | None = None
    #: only the jobs still waiting for this job (posted after= it; fan-in)
    after: UUID | None = None

    def __post_init__(self) -> None:
        if len(self.where) > MAX_TERMS:
            raise ConfigError(f"at most {MAX_TERMS} payload terms, got {len(self.where)}")
        if len(self.ids) > MAX_IDS:
            raise ConfigError(f"at most {MAX_IDS} ids, got {len(self.ids)}")
        for name, text in (("type", self.task_type), ("error", self.error), ("group", self.group)):
            if text is not None and (not is_valid_utf8(text) or "\x00" in text):
                raise ConfigError(f"--{name} must be valid UTF-8 text without NUL")
        if self.error is not None and len(self.error) > MAX_ERROR_TEXT:
            raise ConfigError(f"--error is longer than {MAX_ERROR_TEXT} characters")
        unknown = sorted(set(self.statuses) - {int(s) for s in JobStatus})
        if unknown:
            raise ConfigError(f"unknown status code(s) {', '.join(map(str, unknown))}: use 0-7")
        if isinstance(self.limit, bool) or not 1 <= self.limit <= MAX_LIMIT:
            raise ConfigError(f"--limit must be between 1 and {MAX_LIMIT}, got {self.limit}")

    def describe(self) -> str:
        """The search as the console's line writes it (round-trips through :func:`parse_line`)."""
        parts = [shlex.quote(str(t)) for t in self.where]
        if self.task_type is not None:
            parts.append(f"type={shlex.quote(self.task_type)}")
        parts.extend(f"status={s}" for s in self.statuses)
        if self.since_seconds is not None:
            parts.append(f"since={self.since_seconds:g}s")
        if self.error is not None:
            parts.append(f"error={shlex.quote(self.error)}")
        parts.extend(f"id={i}" for i in self.ids)
        if self.parent is not None:
            parts.append(f"parent={self.parent}")
        if self.group is not None:
            parts.append(f"group={shlex.quote(self.group)}")
        if self.after is not None:
            parts.append(f"after={self.after}")
        if self.limit != DEFAULT_LIMIT:
            parts.append(f"limit={self.limit}")
        return " ".join(parts)


def parse_line(line: str) -> FindQuery:
    """The console's search line: space-separated ``KEY=VALUE`` terms, shell-quoted when a
    value holds spaces. Keys: ``payload.PATH``, type, status (repeatable), since, error,
    limit, id (repeatable), parent, group, after."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise ConfigError(f"cannot read the search {quoted(line)}: {exc}") from None
    where: list[PayloadTerm] = []
    statuses: list[int] = []
    ids: list[UUID] = []
    found: dict[str, str] = {}
    for word in words:
        key, eq, value = word.partition("=")
        if key.startswith(PREFIX):
            where.append(parse_term(word))
            continue
        if not eq or key not in _KEYS:
            raise ConfigError(
                f"unknown search term {quoted(word)}: use payload.PATH=VALUE, type=T,"
                " status=N, since=1h, error=TEXT, limit=N, id=ID, parent=ID, group=SIGNATURE"
                " or after=ID"
            )
        if key == "status":
            statuses.append(_integer(value, "status"))
        elif key == "id":
            ids.append(_uuid(value, "id"))
        elif key in found:
            raise ConfigError(f"{key}= given twice")
        else:
            found[key] = value
    since = found.get("since")
    return FindQuery(
        where=tuple(dict.fromkeys(where)),
        task_type=found.get("type") or None,
        statuses=tuple(sorted(set(statuses))),
        since_seconds=parse_duration(since, option="since") if since is not None else None,
        error=found.get("error") or None,
        limit=_integer(found["limit"], "limit") if "limit" in found else DEFAULT_LIMIT,
        ids=tuple(dict.fromkeys(ids)),
        parent=_uuid(found["parent"], "parent") if "parent" in found else None,
        group=found.get("group") or None,
        after=_uuid(found["after"], "after") if "after" in found else None,
    )


def _uuid(text: str, key: str) -> UUID:
    try:
        return UUID(text)
    except ValueError:
        raise ConfigError(f"{key}= takes a whole job id (a UUID), got {quoted(text)}") from None


def _integer(text: str, key: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{key}= takes a whole number, got {quoted(text)}") from None
