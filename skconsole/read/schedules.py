"""Periodic task types: when each posts its next job, whether its ticks are taken,
and how its latest job went.

Definitions are the ones the workers that run them published (sk_schedules_t);
the next run is computed here from the server's clock (cron rules are cronsim's),
so every face says the same. How many of its jobs wait comes from the depth read
model, which stays cheap on a big queue.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from cronsim import CronSimError

from skconsole.core.durations import format_age
from skconsole.core.errors import ConfigError
from skconsole.core.json_types import JsonObject, attributes
from skconsole.core.schedule import Schedule
from skconsole.core.status import JobStatus
from skconsole.read.depth import Depth, depth
from skconsole.read.query import Conn, fetch, iso

#: a due tick nobody has taken after this long is late: no worker that runs the
#: type is taking its ticks (a running one takes a due tick within a second or two)
SCHEDULE_LATE_AFTER_S = 10.0


@dataclass
class ScheduleInfo:
    """One periodic task type, as the workers that run it published it (sk_schedules_t).

    ``schedule`` says what it is ("every 30s", "cron 0 3 * * * (Europe/Paris)").
    A definition this version cannot read (a cron expression or a time zone
    written by another version) is shown as stored, ``error`` says why, and it
    has no next run. Ages and waits count from the server's clock at the read.
    """

    task_type: str
    schedule: str
    cron: str | None
    every_s: float | None
    timezone: str
    missed: str
    payload: str | None
    #: why the definition cannot be read (None: it can)
    error: str | None
    #: the type is paused: its ticks are not taken, so it has no next run
    paused: bool
    next_run: datetime | None
    next_run_in_s: float | None
    #: how long its latest due tick has waited untaken, past SCHEDULE_LATE_AFTER_S
    late_s: float | None
    #: the latest tick taken (posted, or skipped as missed)
    last_tick: datetime | None
    #: the job of the latest posted tick, its status (None: purged) and when it was posted
    last_task_id: UUID | None
    last_status: int | None
    last_posted_at: datetime | None
    last_posted_age_s: float | None
    #: its jobs in the queue (ready or scheduled), as the depth read model counts
    #: them: estimated from a sample on a big queue (``waiting_estimated``)
    waiting: int
    waiting_estimated: bool
    defined_at: datetime | None
    #: live workers that schedule it (0: none: removed from the code, or its workers
    #: are gone; None: a live worker of an older version, which does not say, might)
    scheduled_by: int | None = None

    @property
    def orphaned(self) -> bool:
        """No live worker schedules it: no tick will be posted."""
        return self.scheduled_by == 0

    @property
    def last_job_purged(self) -> bool:
        """A tick was posted, but its job's result row is gone."""
        return self.last_task_id is not None and self.last_status is None

    @property
    def next_run_text(self) -> str:
        """When its next job is posted, in words: "in 12s", "paused", "late 5m 02s"
        (a due tick nobody took: no worker runs the type), "unreadable"."""
        if self.error is not None:
            return "unreadable"
        if self.paused:
            return "paused"
        if self.orphaned:
            return "no worker schedules it"
        if self.late_s is not None:
            return f"late {format_age(self.late_s)}"
        return f"in {format_age(self.next_run_in_s)}" if self.next_run_in_s is not None else "-"

    @property
    def last_job_text(self) -> str:
        """Its latest posted job's status: "Processed", "purged", or "-" (none posted)."""
        if self.last_task_id is None:
            return "-"
        return "purged" if self.last_status is None else JobStatus.label_of(self.last_status)

    def as_dict(self) -> JsonObject:
        return {
            **attributes(
                self,
                "task_type schedule cron every_s timezone missed payload error paused next_run"
                " next_run_in_s late_s last_tick last_task_id last_status last_job_purged"
                " last_posted_at last_posted_age_s waiting waiting_estimated defined_at"
                " scheduled_by",
            ),
            "next_run": iso(self.next_run),
            "last_tick": iso(self.last_tick),
            "last_task_id": str(self.last_task_id) if self.last_task_id else None,
            "last_status": (
                JobStatus.label_of(self.last_status) if self.last_status is not None else None
            ),
            "last_posted_at": iso(self.last_posted_at),
            "defined_at": iso(self.defined_at),
        }


def _stored_schedule(cron: str | None, every_s: float | None, timezone: str) -> str:
    """A definition as stored, for one this version cannot read."""
    parts = [f"cron {cron}"] if cron is not None else []
    if every_s is not None:
        parts.append(f"every {every_s:g}s")
    text = ", ".join(parts) or "no period"
    return text if timezone == "UTC" else f"{text} ({timezone})"


@dataclass(frozen=True)
class _Stored:
    """A published schedule as sk_schedules_t holds it, with the server's clock at the read."""

    read_at: datetime
    task_type: str
    cron: str | None
    every_s: float | None
    timezone: str | None
    payload: str | None
    missed: str
    last_tick: datetime | None
    last_task_id: UUID | None
    last_posted_at: datetime | None
    defined_at: datetime | None
    paused: bool
    last_status: int | None
    scheduled_by: int | None


def _schedule_info(s: _Stored, waiting: int, estimated: bool) -> ScheduleInfo:
    now, timezone = s.read_at, s.timezone or "UTC"
    description, error = _stored_schedule(s.cron, s.every_s, timezone), None
    next_run = late_s = None
    try:
        schedule = Schedule.stored(
            cron=s.cron, every_s=s.every_s, timezone=timezone, payload=s.payload, missed=s.missed
        )
        description = schedule.describe()
        due, upcoming = schedule.latest_tick(now), schedule.next_tick(now)
    except (ConfigError, CronSimError, ValueError, OverflowError, OSError, StopIteration) as exc:
        error = str(exc) or type(exc).__name__
    else:
        waited = (now - due).total_seconds()
        if not s.paused and s.scheduled_by != 0:
            next_run = upcoming
            if (s.last_tick is None or due > s.last_tick) and waited > SCHEDULE_LATE_AFTER_S:
                late_s = waited
    posted_at = s.last_posted_at
    return ScheduleInfo(
        task_type=s.task_type,
        schedule=description,
        cron=s.cron,
        every_s=s.every_s,
        timezone=timezone,
        missed=str(s.missed),
        payload=s.payload,
        error=error,
        paused=s.paused,
        next_run=next_run,
        next_run_in_s=(next_run - now).total_seconds() if next_run is not None else None,
        late_s=late_s,
        last_tick=s.last_tick,
        last_task_id=s.last_task_id,
        last_status=s.last_status,
        last_posted_at=posted_at,
        last_posted_age_s=(
            max((now - posted_at).total_seconds(), 0.0) if posted_at is not None else None
        ),
        waiting=waiting,
        waiting_estimated=estimated,
        defined_at=s.defined_at,
        scheduled_by=s.scheduled_by,
    )


def schedules(conn: Conn, *, queue: Depth | None = None) -> list[ScheduleInfo]:
    """Every periodic task type: its next run (from the server's clock), its latest
    posted job and that job's status, and how many of its jobs wait (see ScheduleInfo).

    ``queue``: the queue depth, if the caller has just read it (the console's
    refresh does); otherwise it is read here, only when there is a schedule.
    """
    rows = fetch(conn, "schedules", _Stored)
    if not rows:
        return []
    queue = queue if queue is not None else depth(conn)
    waiting = {t.task_type: t.ready + t.scheduled for t in queue.types}
    return [_schedule_info(s, waiting.get(s.task_type, 0), queue.estimated) for s in rows]
