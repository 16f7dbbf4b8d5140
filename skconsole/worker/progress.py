"""A running job's progress (``ctx.progress(fraction, message)``), written off the hot path.

A handler may report progress as often as it likes, from its own thread (a sync
handler) or task (an async one): :meth:`ProgressBoard.report` only keeps the
latest value of each attempt, under a lock. :class:`ProgressWriter`, a loop of
the engine on the upkeep connection, writes what changed once a second in one
statement (``progress_write.sql``), so an attempt costs at most one row write a
second however often it reports, and the claim and finish statements never
change. The write is fenced by the attempt's claim id: a stale attempt (its job
reaped and claimed again) cannot write over the new one. What an attempt
reported after it ended is dropped; its row, ignored by every read once the
attempt is over, is deleted by the next prune (``progress_prune.sql``).
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import psycopg

from skconsole.core.errors import InvalidJobError
from skconsole.db.sqlfiles import query
from skconsole.worker.links import Link, Throttle, guarded

log = logging.getLogger("skconsole.worker")

#: seconds between two writes of this worker's pending progress
PROGRESS_INTERVAL = 1.0
#: seconds between two prunes of the rows of attempts that are over
PRUNE_INTERVAL = 60.0
#: the longest message kept (the column's CHECK says the same)
MAX_MESSAGE = 200


@dataclass(frozen=True)
class Reported:
    """The latest progress an attempt reported, not yet written."""

    task_id: uuid.UUID
    claim_id: int
    fraction: float | None
    message: str | None
    #: time.monotonic() when the handler reported it
    at: float


def checked_fraction(fraction: float | None) -> float | None:
    """``fraction`` as a float in [0, 1] (or None); anything else raises InvalidJobError."""
    if fraction is None:
        return None
    if isinstance(fraction, bool) or not isinstance(fraction, int | float):
        raise InvalidJobError(f"progress must be a number from 0 to 1, not {fraction!r}")
    value = float(fraction)
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InvalidJobError(f"progress must be from 0 to 1, not {fraction!r}")
    return value


def checked_message(message: str | None) -> str | None:
    """``message`` capped at :data:`MAX_MESSAGE` characters (kept as written: every
    face makes it printable when it shows it); NUL, which PostgreSQL's text refuses,
    is dropped."""
    if message is None:
        return None
    if not isinstance(message, str):
        raise InvalidJobError(f"a progress message must be text, not {type(message).__name__}")
    text = message.replace("\x00", "")
    if len(text) > MAX_MESSAGE:
        text = text[: MAX_MESSAGE - 1] + "…"
    # a lone surrogate cannot be sent as UTF-8
    return text.encode("utf-8", "replace").decode("utf-8")


class ProgressBoard:
    """The latest unwritten progress of each running attempt, safe from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[int, Reported] = {}
        self._active: set[int] = set()
        #: how many times handlers reported, and how many rows were sent to be written
        self.reports = 0
        self.rows_sent = 0
        #: how many write rounds sent anything
        self.writes = 0

    def begin(self, claim_id: int) -> None:
        """An attempt started: its reports are kept from now on."""
        with self._lock:
            self._active.add(claim_id)

    def end(self, claim_id: int) -> None:
        """An attempt ended: what it reported and has not been written is dropped."""
        with self._lock:
            self._active.discard(claim_id)
            self._pending.pop(claim_id, None)

    def report(
        self, task_id: uuid.UUID, claim_id: int, fraction: float | None, message: str | None
    ) -> None:
        entry = Reported(task_id, claim_id, fraction, message, time.monotonic())
        with self._lock:
            self.reports += 1
            if claim_id in self._active:
                self._pending[claim_id] = entry

    def take(self) -> list[Reported]:
        """What is pending, now owned by the caller (the board forgets it)."""
        with self._lock:
            taken = list(self._pending.values())
            self._pending.clear()
            return taken

    def give_back(self, entries: list[Reported]) -> None:
        """Entries a write could not send: kept unless a newer report replaced them."""
        with self._lock:
            for e in entries:
                if e.claim_id in self._active:
                    self._pending.setdefault(e.claim_id, e)


class ProgressSink:
    """What :class:`~skconsole.worker.registry.JobContext` reports to: one attempt's slot."""

    __slots__ = ("board", "claim_id", "task_id")

    def __init__(self, board: ProgressBoard, task_id: uuid.UUID, claim_id: int) -> None:
        self.board = board
        self.task_id = task_id
        self.claim_id = claim_id

    def __call__(self, fraction: float | None, message: str | None) -> None:
        self.board.report(self.task_id, self.claim_id, fraction, message)


class ProgressWriter:
    """Writes the board once a second, and prunes the rows of attempts that are over."""

    def __init__(self, link: Link, board: ProgressBoard) -> None:
        self.link = link
        self.board = board
        self._throttle = Throttle()
        self._pruned_at = time.monotonic()
        #: write rounds so far (one every PROGRESS_INTERVAL): at most one row per attempt each
        self.rounds = 0

    async def run(self) -> None:
        while True:
            await asyncio.sleep(PROGRESS_INTERVAL)
            self.rounds += 1
            await self.write_once()
            if time.monotonic() - self._pruned_at >= PRUNE_INTERVAL:
                self._pruned_at = time.monotonic()
                await self._guarded("progress prune", self._prune)

    async def write_once(self) -> None:
        entries = self.board.take()
        if not entries:
            return
        now = time.monotonic()
        params = {
            "task_ids": [e.task_id for e in entries],
            "claim_ids": [e.claim_id for e in entries],
            "fractions": [e.fraction for e in entries],
            "messages": [e.message for e in entries],
            "ages": [max(0.0, now - e.at) for e in entries],
        }

        async def op(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(query("progress_write"), params)

        self.board.writes += 1
        self.board.rows_sent += len(entries)
        if not await self._guarded("progress", lambda: self.link.run(op, retry=False)):
            self.board.give_back(entries)

    async def _prune(self) -> None:
        async def op(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(query("progress_prune"))

        await self.link.run(op, retry=False)

    async def _guarded(self, what: str, step: Callable[[], Awaitable[object]]) -> bool:
        return await guarded(self._throttle, what, step)
