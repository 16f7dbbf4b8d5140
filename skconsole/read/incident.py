"""An incident bundle: one JSON document that holds what the queue kept of a window of
time, to hand over, attach to a postmortem and open offline (``skconsole --bundle``).

``skconsole incident export --since 02:30 --until 03:30 > incident.json`` writes it: the
per-minute record of the window per type and per failure signature and the gauges (a
:class:`~skconsole.read.past.Book`, from an hour before the window so its first minute
has its failure groups), a sample error per failure signature (from the attempts still
kept), the operator actions audited in the window and the workers registered during it.
``format`` and ``version`` say what it is; :func:`load` refuses anything else in one line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from uuid import UUID

from skconsole.core.errors import ConfigError
from skconsole.core.json_read import Doc
from skconsole.core.json_types import JsonObject
from skconsole.core.signature import error_signature
from skconsole.core.text import quoted
from skconsole.read.past import BEFORE_T, MINUTE, Book, book, minute_of
from skconsole.read.query import Conn, fetch, iso

FORMAT = "skconsole-incident"
VERSION = 1
#: the longest window one bundle holds
MAX_WINDOW = timedelta(days=7)
#: failed attempts read for sample errors, newest first
SAMPLE_SCAN = 5000
#: sample errors kept per signature
SAMPLES_PER_SIGNATURE = 3
#: the most characters of one sample error kept
SAMPLE_CHARS = 4000


@dataclass(frozen=True)
class SampleError:
    """A failed attempt of the window, as sk_attempts_t kept it."""

    signature: str
    task_id: str
    attempt: int
    ended_at: datetime
    status: int
    task_type: str | None
    error: str

    def as_dict(self) -> JsonObject:
        return {
            "signature": self.signature,
            "task_id": self.task_id,
            "attempt": self.attempt,
            "ended_at": iso(self.ended_at),
            "status": self.status,
            "task_type": self.task_type,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, d: Doc) -> SampleError:
        return cls(
            d.text("signature"),
            d.text("task_id"),
            d.integer("attempt"),
            d.time("ended_at"),
            d.integer("status"),
            d.text_or_none("task_type"),
            d.text("error"),
        )


@dataclass(frozen=True)
class _Attempt:
    task_id: UUID
    attempt: int
    ended_at: datetime
    status: int
    error: str
    task_type: str | None


def sample_errors(conn: Conn, *, since: datetime, until: datetime) -> list[SampleError]:
    """Up to :data:`SAMPLES_PER_SIGNATURE` failed attempts per signature that ended in
    [since, until), newest first, as long as their jobs are kept."""
    found = fetch(
        conn,
        "incident_samples",
        _Attempt,
        {"since": since, "until": until, "limit": SAMPLE_SCAN},
    )
    out: list[SampleError] = []
    per: dict[str, int] = {}
    for a in found:
        signature = error_signature(a.error)
        if per.get(signature, 0) >= SAMPLES_PER_SIGNATURE:
            continue
        per[signature] = per.get(signature, 0) + 1
        out.append(
            SampleError(
                signature,
                str(a.task_id),
                a.attempt,
                a.ended_at,
                a.status,
                a.task_type,
                a.error[:SAMPLE_CHARS],
            )
        )
    return out


@dataclass(frozen=True)
class SeenWorker:
    """A worker registered during the window."""

    worker_id: str
    process_id: str
    host: str
    pid: int
    task_types: tuple[str, ...]
    started_at: datetime
    heartbeat_at: datetime
    stopped_at: datetime | None
    app_version: str | None

    def as_dict(self) -> JsonObject:
        return {
            "worker_id": self.worker_id,
            "process_id": self.process_id,
            "host": self.host,
            "pid": self.pid,
            "task_types": list(self.task_types),
            "started_at": iso(self.started_at),
            "heartbeat_at": iso(self.heartbeat_at),
            "stopped_at": iso(self.stopped_at),
            "app_version": self.app_version,
        }

    @classmethod
    def from_dict(cls, d: Doc) -> SeenWorker:
        return cls(
            d.text("worker_id"),
            d.text("process_id"),
            d.text("host"),
            d.integer("pid"),
            tuple(d.texts("task_types")),
            d.time("started_at"),
            d.time("heartbeat_at"),
            d.time_or_none("stopped_at"),
            d.text_or_none("app_version"),
        )


def _worker(
    *,
    worker_id: UUID,
    process_id: str,
    host: str,
    pid: int,
    task_types: list[str] | None,
    started_at: datetime,
    heartbeat_at: datetime,
    stopped_at: datetime | None,
    app_version: str | None,
) -> SeenWorker:
    return SeenWorker(
        str(worker_id),
        process_id,
        host,
        pid,
        tuple(task_types or ()),
        started_at,
        heartbeat_at,
        stopped_at,
        app_version,
    )


def workers_seen(conn: Conn, *, since: datetime, until: datetime) -> list[SeenWorker]:
    """The workers registered while [since, until) lasted (not yet forgotten)."""
    return fetch(conn, "incident_workers", _worker, {"since": since, "until": until})


@dataclass(frozen=True)
class AuditLine:
    """An operator action of the window, in one line (``skconsole audit``'s words)."""

    audit_id: int
    at: datetime
    who: str
    action: str
    what: str
    count: int

    def as_dict(self) -> JsonObject:
        return {
            "audit_id": self.audit_id,
            "at": iso(self.at),
            "who": self.who,
            "action": self.action,
            "what": self.what,
            "count": self.count,
        }

    @classmethod
    def from_dict(cls, d: Doc) -> AuditLine:
        return cls(
            d.integer("audit_id"),
            d.time("at"),
            d.text("who"),
            d.text("action"),
            d.text("what"),
            d.integer("count"),
        )


@dataclass(frozen=True)
class Incident:
    """One incident bundle: the window [since, until), where it was exported from and
    when, and what the queue kept of it."""

    since: datetime
    until: datetime
    exported_at: datetime
    queue: str
    book: Book
    samples: tuple[SampleError, ...]
    audit: tuple[AuditLine, ...]
    workers: tuple[SeenWorker, ...]

    def sample_of(self) -> dict[str, str]:
        """The newest sample error per signature."""
        out: dict[str, str] = {}
        for s in self.samples:
            out.setdefault(s.signature, s.error)
        return out

    def failure_groups(self) -> list[JsonObject]:
        """The window's failures per signature, most first, with their sample errors."""
        totals: dict[str, dict[str, int]] = {}
        types: dict[str, set[str]] = {}
        first: dict[str, datetime] = {}
        last: dict[str, datetime] = {}
        for (t, s), per in self.book.by_signature.items():
            for at, c in per.items():
                if not (self.since <= at < self.until) or not c.failed:
                    continue
                got = totals.setdefault(
                    s, {"failed": 0, "recoverable": 0, "faulted": 0, "fatal": 0, "reaped": 0}
                )
                got["failed"] += c.failed
                got["recoverable"] += c.failed_recoverable
                got["faulted"] += c.failed_faulted
                got["fatal"] += c.failed_fatal
                got["reaped"] += c.reaped
                types.setdefault(s, set()).add(t)
                first[s] = min(first.get(s, at), at)
                last[s] = max(last.get(s, at), at)
        order = sorted(totals, key=lambda s: (-totals[s]["failed"], s))
        return [
            {
                "signature": s,
                "task_types": sorted(types[s]),
                **totals[s],
                "first_seen": iso(first[s]),
                "last_seen": iso(last[s]),
                "samples": [x.as_dict() for x in self.samples if x.signature == s],
            }
            for s in order
        ]

    def as_dict(self) -> JsonObject:
        return {
            "format": FORMAT,
            "version": VERSION,
            "since": iso(self.since),
            "until": iso(self.until),
            "exported_at": iso(self.exported_at),
            "queue": self.queue,
            "failure_groups": self.failure_groups(),
            "record": self.book.as_dict(),
            "samples": [s.as_dict() for s in self.samples],
            "audit": [a.as_dict() for a in self.audit],
            "workers": [w.as_dict() for w in self.workers],
        }

    @classmethod
    def from_dict(cls, d: Doc) -> Incident:
        fmt = d.value.get("format")
        if fmt != FORMAT:
            raise ConfigError(f"not an skconsole incident bundle (its format is {fmt!r})")
        version = d.integer("version")
        if version > VERSION:
            raise ConfigError(
                f"an incident bundle of version {version}: this skconsole reads up to {VERSION}"
            )
        return cls(
            d.time("since"),
            d.time("until"),
            d.time("exported_at"),
            d.text("queue"),
            Book.from_dict(d.doc("record")),
            tuple(SampleError.from_dict(s) for s in d.docs("samples")),
            tuple(AuditLine.from_dict(a) for a in d.docs("audit")),
            tuple(SeenWorker.from_dict(w) for w in d.docs("workers")),
        )


def check_window(since: datetime, until: datetime) -> None:
    """A window a bundle can hold: ``since`` before ``until``, at most :data:`MAX_WINDOW`."""
    if until <= since:
        raise ConfigError(f"--until ({iso(until)}) must come after --since ({iso(since)})")
    if until - since > MAX_WINDOW:
        raise ConfigError(
            f"a bundle holds at most {MAX_WINDOW.days} days: --since {iso(since)}"
            f" --until {iso(until)} is {(until - since).total_seconds() / 86400:.1f} days"
        )


def incident(
    conn: Conn,
    *,
    since: datetime,
    until: datetime,
    queue: str,
    audit: Sequence[AuditLine],
    now: datetime,
) -> Incident:
    """The bundle of [since, until) (minutes: ``since`` down to its minute, ``until`` up
    to the end of its own) on ``conn``; ``audit``: the window's audit rows in words."""
    check_window(since, until)
    since = minute_of(since)
    until = minute_of(until) + (MINUTE if until != minute_of(until) else timedelta(0))
    kept = book(conn, since=since - BEFORE_T, until=until)
    return Incident(
        since,
        until,
        now,
        queue,
        kept,
        tuple(sample_errors(conn, since=since, until=until)),
        tuple(audit),
        tuple(workers_seen(conn, since=since, until=until)),
    )


def load(path: Path) -> Incident:
    """The bundle in ``path``; a ConfigError in one line when it cannot be read, is no JSON
    or no bundle."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the bundle {quoted(str(path))}: {exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{quoted(str(path))} is no JSON: {exc}") from None
    try:
        return Incident.from_dict(Doc.of(data, "the bundle"))
    except ConfigError as exc:
        raise ConfigError(f"{quoted(str(path))}: {exc}") from None
