"""Posting the ticks of periodic task types, with no leader.

Every worker that runs a scheduled type takes part: it reads the latest tick
taken (``sk_schedules_t``) and the server's clock, and when a tick is due it
tries to take it (``schedule_tick.sql``). Taking a tick and posting its job
are one statement, and only one worker can move a schedule's last tick past a
given time, so N workers post one job per tick, and a tick already taken is
never posted again. Runs on the upkeep connection, between its other rounds.

Ticks follow one definition: the one stored, which the worker started last
published (a worker publishes its own when it starts and it differs). Every
worker computes ticks from the stored definition, not from its own code: during
a rolling deploy that changes a schedule, old and new workers would otherwise
each post their own ticks, the union of both (an interval changed from 4 s to
9 s ran at both; a cron moved from 03:00 to 04:00 ran twice). The last started
wins because that is what a deploy and a rollback both do: start the workers
whose code is wanted. A worker whose own definition differs says so in its log.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg
from cronsim import CronSimError

from skconsole.core.errors import ConfigError
from skconsole.core.schedule import Schedule, tick_id
from skconsole.db.rows import aone, arows, avalue
from skconsole.db.sqlfiles import query
from skconsole.worker.links import Link

log = logging.getLogger("skconsole.worker")

#: with missed="skip", a tick found later than this (or than one period, if
#: shorter) counts as missed and is not posted
SKIP_AFTER_S = 60.0
#: longest wait between two looks at the schedules (a pause lifted, a tick
#: taken by another worker, a server clock that moved, a definition changed)
LOOK_EVERY_S = 1.0


@dataclass(frozen=True)
class _State:
    """One of this worker's schedules as schedule_state.sql reads it: the server's
    clock, the latest tick taken, whether the type is paused, and the stored
    definition (the one ticks follow) with when it was published."""

    read_at: datetime
    task_type: str
    last_tick: datetime | None
    paused: bool
    cron: str | None
    every_s: float | None
    timezone: str | None
    payload: str | None
    missed: str
    defined_at: datetime | None


@dataclass(frozen=True)
class _Tick:
    """What schedule_tick.sql did: the tick taken (0 or 1), its job posted (0 or 1)."""

    taken: int
    posted: int
    notified: object


@dataclass(frozen=True)
class _Followed:
    """A stored definition as this worker follows it: when it was published, and the
    schedule (None: this version cannot read it)."""

    defined_at: datetime | None
    schedule: Schedule | None


class Scheduler:
    """The periodic types of one worker, and when it next has to look at them."""

    def __init__(self, link: Link, schedules: dict[str, Schedule], source: str) -> None:
        self.link = link
        #: this worker's own definitions: what it publishes when it starts
        self.schedules = schedules
        self.source = source
        self.types = list(schedules)
        self.posted = 0
        #: monotonic time of the next look (0: now)
        self.due_at = 0.0
        #: cleared when the engine stops: a stopping worker takes no tick (its
        #: jobs would wait for the next worker, piling up across a restart)
        self.active = True
        self._published = False
        #: the stored definitions ticks follow, by type
        self._stored: dict[str, _Followed] = {}

    async def run_once(self) -> None:
        """Publish the definitions (once), take every due tick, plan the next look."""
        self.due_at = time.monotonic() + LOOK_EVERY_S  # if this round fails
        if not self.active:
            return
        if not self._published:
            await self.link.run(self._publish, retry=False)
            self._published = True
            log.info(
                "schedules: %s",
                ", ".join(f"{t} ({s.describe()})" for t, s in self.schedules.items()),
            )
        now, states = await self.link.run(self._state, retry=False)
        if len(states) < len(self.schedules):
            self._published = False  # a schedule row was deleted: publish it again
        followed: list[Schedule] = []
        for task_type, state in states.items():
            schedule = self._follow(task_type, state)
            if schedule is None:
                continue
            followed.append(schedule)
            due = schedule.latest_tick(now)
            last_tick = state.last_tick
            if state.paused or not self.active or (last_tick is not None and due <= last_tick):
                continue
            post = posts_tick(schedule, last_tick, due, now)
            taken, posted = await self.link.run(
                functools.partial(self._take, task_type=task_type, tick=due, post=post),
                retry=False,
            )
            if posted:
                self.posted += 1
                log.info("posted %s's job for %s", task_type, due.isoformat())
            elif taken:
                log.info("skipped %s's missed tick of %s (missed='skip')", task_type, due)
        soonest = min((s.next_tick(now) for s in followed), default=None)
        if soonest is not None:
            wait = min(LOOK_EVERY_S, (soonest - now).total_seconds())
            self.due_at = time.monotonic() + max(wait, 0.0)

    def _follow(self, task_type: str, stored: _State) -> Schedule | None:
        """The stored definition of ``task_type`` as a Schedule (read again only when it
        changed); None when this version cannot read it (its ticks wait for a worker
        that can). Logs once when it differs from this worker's own."""
        defined_at = stored.defined_at
        known = self._stored.get(task_type)
        if known is not None and known.defined_at == defined_at:
            return known.schedule
        own = self.schedules[task_type]
        try:
            schedule: Schedule | None = Schedule.stored(
                cron=stored.cron,
                every_s=stored.every_s,
                timezone=stored.timezone or "UTC",
                payload=stored.payload,
                missed=stored.missed,
            )
        except (ConfigError, CronSimError, ValueError, OverflowError, OSError) as exc:
            schedule = None
            log.warning(
                "schedule of %s: the stored definition cannot be read here (%s); its ticks"
                " wait for a worker that can",
                task_type,
                exc,
            )
        if schedule is not None and schedule != own:
            log.warning(
                "schedule of %s: following the stored definition (%s, published %s by the"
                " worker started last), not this worker's own (%s)",
                task_type,
                schedule.describe(),
                defined_at.isoformat() if defined_at is not None else "?",
                own.describe(),
            )
        self._stored[task_type] = _Followed(defined_at, schedule)
        return schedule

    async def _publish(self, conn: psycopg.AsyncConnection[Any]) -> None:
        now = await _server_now(conn)
        rows = list(self.schedules.items())
        await conn.execute(
            query("schedule_define"),
            {
                "types": [t for t, _ in rows],
                "crons": [s.cron for _, s in rows],
                "every_s": [s.every for _, s in rows],
                "timezones": [s.timezone for _, s in rows],
                "payloads": [s.payload for _, s in rows],
                "missed": [s.missed for _, s in rows],
                "latest_ticks": [s.latest_tick(now) for _, s in rows],
            },
        )

    async def _state(
        self, conn: psycopg.AsyncConnection[Any]
    ) -> tuple[datetime, dict[str, _State]]:
        states = await arows(conn, query("schedule_state"), _State, {"types": self.types})
        now = states[0].read_at if states else await _server_now(conn)
        return now, {s.task_type: s for s in states}

    async def _take(
        self, conn: psycopg.AsyncConnection[Any], *, task_type: str, tick: datetime, post: bool
    ) -> tuple[bool, bool]:
        row = await aone(
            conn,
            query("schedule_tick"),
            _Tick,
            {
                "type": task_type,
                "tick": tick,
                "post": post,
                "id": tick_id(task_type, tick),
                "source": self.source,
            },
        )
        return (bool(row and row.taken), bool(row and row.posted))


def posts_tick(
    schedule: Schedule, last_tick: datetime | None, tick: datetime, now: datetime
) -> bool:
    """Whether taking ``tick`` at ``now`` posts its job. Only the latest due tick is
    ever taken, so ticks before it that nobody took (no worker ran the type, or
    it was paused) are never posted on their own. missed="once" posts the latest
    for them all. missed="skip" posts a tick only when it directly follows the
    last one taken and is late by at most SKIP_AFTER_S or one period: after a
    gap, nothing runs until the next tick (a nightly job found at 05:00 waits
    for the next night)."""
    if schedule.missed == "once":
        return True
    if last_tick is not None and schedule.next_tick(last_tick) < tick:
        return False  # ticks were missed: this one is among them
    period = schedule.next_tick(tick) - tick
    return now - tick <= min(timedelta(seconds=SKIP_AFTER_S), period)


async def _server_now(conn: psycopg.AsyncConnection[Any]) -> datetime:
    now: datetime | None = await avalue(conn, query("db_now"))
    assert now is not None
    return now
